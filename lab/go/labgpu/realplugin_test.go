package labgpu

import (
	"encoding/json"
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"testing"
)

// Device entries NVIDIA's real gpu-kubelet-plugin published (main at 95932046, treated as
// 0.5.0, over its mock NVML set to the lab's figures; make real-plugin on Kubernetes 1.37.2,
// 2026-12-06), as the API server stored them: node gpu-shared's A10 gpu-0 and L4 gpu-1 with
// --feature-gates ConsumableShares=true --consumable-shares <mode>, and node-a's A10 gpu-1
// with the flag's default, the entry lab/tests/test_real_plugin_pins.py pins for the
// Python simulator. CI has no checkout of NVIDIA's code, so they are pinned here.
var realPluginEntries = []struct {
	mode, node, name, product, memory string
	entry                             string
}{
	{"memory", "gpu-shared", "gpu-0", "NVIDIA A10", "23028Mi",
		`{"allowMultipleAllocations":true,"attributes":{"architecture":{"string":"Ampere"},"brand":{"string":"Nvidia"},"cudaComputeCapability":{"version":"8.6.0"},"cudaDriverVersion":{"version":"13.0.0"},"driverVersion":{"version":"580.126.20"},"productName":{"string":"NVIDIA A10"},"resource.kubernetes.io/numaNode":{"int":0},"resource.kubernetes.io/pciBusID":{"string":"0000:10:00.0"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:0f"},"type":{"string":"gpu"},"uuid":{"string":"GPU-e337a7b5-2f94-54c2-9c80-47791b158b27"}},"capacity":{"memory":{"requestPolicy":{"default":"23028Mi","validRange":{"max":"23028Mi","min":"1Mi","step":"1Mi"}},"value":"23028Mi"}},"name":"gpu-0"}`},
	{"memory", "gpu-shared", "gpu-1", "NVIDIA L4", "23034Mi",
		`{"allowMultipleAllocations":true,"attributes":{"architecture":{"string":"Ada Lovelace"},"brand":{"string":"Nvidia"},"cudaComputeCapability":{"version":"8.9.0"},"cudaDriverVersion":{"version":"13.0.0"},"driverVersion":{"version":"580.126.20"},"productName":{"string":"NVIDIA L4"},"resource.kubernetes.io/numaNode":{"int":0},"resource.kubernetes.io/pciBusID":{"string":"0000:20:00.0"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:1f"},"type":{"string":"gpu"},"uuid":{"string":"GPU-cc7a1824-4365-50c6-b8c1-ccd7c1be9efc"}},"capacity":{"memory":{"requestPolicy":{"default":"23034Mi","validRange":{"max":"23034Mi","min":"1Mi","step":"1Mi"}},"value":"23034Mi"}},"name":"gpu-1"}`},
	{"unlimited", "gpu-shared", "gpu-0", "NVIDIA A10", "23028Mi",
		`{"allowMultipleAllocations":true,"attributes":{"architecture":{"string":"Ampere"},"brand":{"string":"Nvidia"},"cudaComputeCapability":{"version":"8.6.0"},"cudaDriverVersion":{"version":"13.0.0"},"driverVersion":{"version":"580.126.20"},"productName":{"string":"NVIDIA A10"},"resource.kubernetes.io/numaNode":{"int":0},"resource.kubernetes.io/pciBusID":{"string":"0000:10:00.0"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:0f"},"type":{"string":"gpu"},"uuid":{"string":"GPU-e337a7b5-2f94-54c2-9c80-47791b158b27"}},"capacity":{"memory":{"requestPolicy":{"default":"0","validRange":{"max":"23028Mi","min":"0","step":"1Mi"}},"value":"23028Mi"}},"name":"gpu-0"}`},
	{"unlimited", "gpu-shared", "gpu-1", "NVIDIA L4", "23034Mi",
		`{"allowMultipleAllocations":true,"attributes":{"architecture":{"string":"Ada Lovelace"},"brand":{"string":"Nvidia"},"cudaComputeCapability":{"version":"8.9.0"},"cudaDriverVersion":{"version":"13.0.0"},"driverVersion":{"version":"580.126.20"},"productName":{"string":"NVIDIA L4"},"resource.kubernetes.io/numaNode":{"int":0},"resource.kubernetes.io/pciBusID":{"string":"0000:20:00.0"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:1f"},"type":{"string":"gpu"},"uuid":{"string":"GPU-cc7a1824-4365-50c6-b8c1-ccd7c1be9efc"}},"capacity":{"memory":{"requestPolicy":{"default":"0","validRange":{"max":"23034Mi","min":"0","step":"1Mi"}},"value":"23034Mi"}},"name":"gpu-1"}`},
	{"4", "gpu-shared", "gpu-0", "NVIDIA A10", "23028Mi",
		`{"allowMultipleAllocations":true,"attributes":{"architecture":{"string":"Ampere"},"brand":{"string":"Nvidia"},"cudaComputeCapability":{"version":"8.6.0"},"cudaDriverVersion":{"version":"13.0.0"},"driverVersion":{"version":"580.126.20"},"productName":{"string":"NVIDIA A10"},"resource.kubernetes.io/numaNode":{"int":0},"resource.kubernetes.io/pciBusID":{"string":"0000:10:00.0"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:0f"},"type":{"string":"gpu"},"uuid":{"string":"GPU-e337a7b5-2f94-54c2-9c80-47791b158b27"}},"capacity":{"memory":{"requestPolicy":{"default":"0","validRange":{"max":"23028Mi","min":"0","step":"1Mi"}},"value":"23028Mi"},"shares":{"requestPolicy":{"default":"1","validRange":{"max":"4","min":"1","step":"1"}},"value":"4"}},"name":"gpu-0"}`},
	{"4", "gpu-shared", "gpu-1", "NVIDIA L4", "23034Mi",
		`{"allowMultipleAllocations":true,"attributes":{"architecture":{"string":"Ada Lovelace"},"brand":{"string":"Nvidia"},"cudaComputeCapability":{"version":"8.9.0"},"cudaDriverVersion":{"version":"13.0.0"},"driverVersion":{"version":"580.126.20"},"productName":{"string":"NVIDIA L4"},"resource.kubernetes.io/numaNode":{"int":0},"resource.kubernetes.io/pciBusID":{"string":"0000:20:00.0"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:1f"},"type":{"string":"gpu"},"uuid":{"string":"GPU-cc7a1824-4365-50c6-b8c1-ccd7c1be9efc"}},"capacity":{"memory":{"requestPolicy":{"default":"0","validRange":{"max":"23034Mi","min":"0","step":"1Mi"}},"value":"23034Mi"},"shares":{"requestPolicy":{"default":"1","validRange":{"max":"4","min":"1","step":"1"}},"value":"4"}},"name":"gpu-1"}`},
	{"disabled", "node-a", "gpu-1", "NVIDIA A10", "23028Mi",
		`{"attributes":{"architecture":{"string":"Ampere"},"brand":{"string":"Nvidia"},"cudaComputeCapability":{"version":"8.6.0"},"cudaDriverVersion":{"version":"13.0.0"},"driverVersion":{"version":"580.126.20"},"productName":{"string":"NVIDIA A10"},"resource.kubernetes.io/numaNode":{"int":0},"resource.kubernetes.io/pciBusID":{"string":"0000:20:00.0"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:1f"},"type":{"string":"gpu"},"uuid":{"string":"GPU-46c80926-c66e-52f4-959d-0f85365ced80"}},"capacity":{"memory":{"value":"23028Mi"}},"name":"gpu-1"}`},
}

// What the stand-in does not publish: attributes of hardware it does not have (NVML's
// architecture, CUDA and driver versions; the PCI bus id, PCIe root and NUMA node NVIDIA's
// plugin reads from sysfs). It never published them (devices.go); the node lab's tests select
// on none of them.
var notPublished = []string{
	"attributes.architecture.string", "attributes.cudaComputeCapability.version",
	"attributes.cudaDriverVersion.version", "attributes.driverVersion.version",
	"attributes.resource.kubernetes.io/numaNode.int", "attributes.resource.kubernetes.io/pciBusID.string",
	"attributes.resource.kubernetes.io/pcieRoot.string",
}

// The stand-in's UUIDs come from node and minor (Inventory), not from NVML: same form, own value.
var uuidForm = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// The stand-in, started as main.go starts it (--consumable-shares or CONSUMABLE_SHARES, and
// FEATURE_GATES, through SharesFlag, SharesFromFlags and PublishedDevices), publishes every
// field NVIDIA's plugin published for the GPU, with the same value, but the ones above.
func TestStandInPublishesWhatNVIDIAsPluginPublished(t *testing.T) {
	sort.Strings(notPublished)
	for _, c := range realPluginEntries {
		for _, viaEnv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s/env=%v", c.mode, c.name, viaEnv), func(t *testing.T) {
				env := map[string]string{}
				args := []string{"--consumable-shares", c.mode}
				if viaEnv {
					env["CONSUMABLE_SHARES"], args = c.mode, nil
				}
				fs := flag.NewFlagSet("lab-gpu-plugin", flag.ContinueOnError)
				shares := SharesFlag(fs, func(name string) (string, bool) { v, ok := env[name]; return v, ok })
				if err := fs.Parse(args); err != nil {
					t.Fatal(err)
				}
				_, mode, err := SharesFromFlags(*shares, "ConsumableShares=true")
				if err != nil {
					t.Fatal(err)
				}
				var got, want map[string]any
				for _, device := range PublishedDevices(Inventory(c.node, 2, c.product, c.memory), mode) {
					if device.Name == c.name {
						raw, _ := json.Marshal(device)
						_ = json.Unmarshal(raw, &got)
					}
				}
				if err := json.Unmarshal([]byte(c.entry), &want); err != nil {
					t.Fatal(err)
				}
				mine, real := flatten("", got), flatten("", want)
				var missing, differing, extra []string
				for path, value := range real {
					switch value2, ok := mine[path]; {
					case !ok:
						missing = append(missing, path)
					case path == "attributes.uuid.string":
						if !uuidForm.MatchString(fmt.Sprint(value2)) {
							differing = append(differing, fmt.Sprintf("%s: %v", path, value2))
						}
					case !reflect.DeepEqual(value2, value):
						differing = append(differing, fmt.Sprintf("%s: %v, real %v", path, value2, value))
					}
				}
				for path := range mine {
					if _, ok := real[path]; !ok {
						extra = append(extra, path)
					}
				}
				sort.Strings(missing)
				if !reflect.DeepEqual(missing, notPublished) || differing != nil || extra != nil {
					t.Errorf("not published %v (known: %v)\ndiffering %v\nonly in the stand-in %v",
						missing, notPublished, differing, extra)
				}
			})
		}
	}
}

// flatten turns a decoded JSON object into path -> leaf value.
func flatten(prefix string, value any) map[string]any {
	object, ok := value.(map[string]any)
	if !ok {
		return map[string]any{prefix: value}
	}
	fields := map[string]any{}
	for key, inner := range object {
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		for p, v := range flatten(path, inner) {
			fields[p] = v
		}
	}
	return fields
}
