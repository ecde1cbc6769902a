package labgpu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

func opaque(source resourceapi.AllocationConfigSource, requests []string, parameters string) resourceapi.DeviceAllocationConfiguration {
	return resourceapi.DeviceAllocationConfiguration{Source: source, Requests: requests,
		DeviceConfiguration: resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
			Driver: "gpu.nvidia.com", Parameters: runtime.RawExtension{Raw: []byte(parameters)}}}}
}

func allocation(configs ...resourceapi.DeviceAllocationConfiguration) *resourceapi.DeviceAllocationResult {
	return &resourceapi.DeviceAllocationResult{Config: configs, Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: "gpu.nvidia.com", Pool: "w1", Device: "gpu-0"}}}
}

const mpsClass = `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS",
  "mpsConfig":{"defaultActiveThreadPercentage":50,"defaultPinnedDeviceMemoryLimit":"8Gi"}}}`
const timeSlicedClaim = `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}}`

var allGates = map[string]bool{GateMPS: true, GateTimeSlicing: true}

func TestTheClaimsConfigWinsOverTheClasss(t *testing.T) {
	sharing, err := SharingFor("gpu.nvidia.com", allocation(
		opaque(resourceapi.AllocationConfigSourceClaim, nil, timeSlicedClaim),
		opaque(resourceapi.AllocationConfigSourceClass, nil, mpsClass)), allGates)
	if err != nil || sharing["gpu-0"].Strategy != "TimeSlicing" {
		t.Fatalf("got %+v, %v", sharing["gpu-0"], err)
	}
}

func TestRefusalsAreTheDriversOwn(t *testing.T) {
	for name, tc := range map[string]struct {
		parameters string
		gates      map[string]bool
		words      string
	}{
		"unknown field": {`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"multiUser":true}}}`,
			allGates, `unknown field "multiUser"`},
		"gate off":      {mpsClass, map[string]bool{GateTimeSlicing: true}, `the "MPSSupport" feature gate is not enabled`},
		"bad interval":  {`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Often"}}}`, allGates, "unknown time-slice interval: Often"},
		"bad strategy":  {`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"Spatial"}}`, allGates, "unknown GPU sharing strategy: Spatial"},
		"mps with time": {`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","timeSlicingConfig":{"interval":"Short"}}}`, allGates, "cannot use TimeSlicingConfig"},
	} {
		_, err := SharingFor("gpu.nvidia.com", allocation(opaque(resourceapi.AllocationConfigSourceClass, nil, tc.parameters)), tc.gates)
		if err == nil || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.words)
		}
	}
}

func TestAConfigForAnotherRequestDoesNotApply(t *testing.T) {
	sharing, err := SharingFor("gpu.nvidia.com", allocation(opaque(resourceapi.AllocationConfigSourceClaim, []string{"other"}, mpsClass)), allGates)
	if err != nil || sharing["gpu-0"] != nil {
		t.Fatalf("got %+v, %v", sharing["gpu-0"], err)
	}
}

func TestMPSCommandsAreTheDaemonsStartUp(t *testing.T) {
	gpus := Inventory("w1", 2, "NVIDIA L4", "23034Mi")
	var config gpuConfig
	if err := json.Unmarshal([]byte(`{"sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":50,
	  "defaultPinnedDeviceMemoryLimit":"8Gi","defaultPerDevicePinnedMemoryLimit":{"1":"4Gi"}}}}`), &config); err != nil {
		t.Fatal(err)
	}
	commands, err := mpsCommands(config.Sharing.MpsConfig, gpus)
	if err != nil {
		t.Fatal(err)
	}
	limits := []string{"set_default_device_pinned_mem_limit " + gpus[0].UUID + " 8192M",
		"set_default_device_pinned_mem_limit " + gpus[1].UUID + " 4096M"}
	sort.Strings(limits) // one line per UUID, in UUID order
	want := append([]string{"set_default_active_thread_percentage 50"}, limits...)
	if strings.Join(commands, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", commands, want)
	}
	if _, err := mpsCommands(&mpsConfig{DefaultPerDevicePinnedMemoryLimit: map[string]resource.Quantity{"7": resource.MustParse("1Gi")}}, gpus); err == nil {
		t.Fatal("an index past the claim's devices was accepted")
	}
}

func TestMPSSpecMountsThePipeDirectory(t *testing.T) {
	dir := t.TempDir()
	gpus := Inventory("w1", 1, "NVIDIA L4", "23034Mi")
	if err := WriteSpec(dir, "uid-1", gpus, MPSEdits("/var/run/dra-lab-mps/uid-1")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "lab.dra.gpu-claim_uid-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, words := range []string{`"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps"`, `"hostPath": "/var/run/dra-lab-mps/uid-1"`,
		`"containerPath": "/tmp/nvidia-mps"`} {
		if !strings.Contains(text, words) {
			t.Errorf("the spec lacks %s:\n%s", words, text)
		}
	}
}
