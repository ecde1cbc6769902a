package labgpu

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// What NVIDIA's kubelet plugin 0.5.0 adds with ConsumableShares, read in its source (main at
// 95932046, treated as 0.5.0): cmd/gpu-kubelet-plugin/consumable_shares.go for the shapes and
// main.go for the flag (--consumable-shares, env CONSUMABLE_SHARES, default "disabled") and its
// checks. Written here independently, so that the node lab publishes what the real plugin
// publishes; the lab's Python simulator (lab/labctl/apiserver/sim/gpus.py) does the same.

// SharesGate is the driver's feature gate (alpha, off by default, since 0.5).
const SharesGate = "ConsumableShares"

// SharesDisabled is the flag's default.
const SharesDisabled = "disabled"

// SharesFlag registers --consumable-shares on fs as NVIDIA's plugin has it: its default is
// CONSUMABLE_SHARES where that is set (lookupEnv: os.LookupEnv), "disabled" otherwise.
func SharesFlag(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) *string {
	fallback := SharesDisabled
	if value, ok := lookupEnv("CONSUMABLE_SHARES"); ok {
		fallback = value
	}
	return fs.String("consumable-shares", fallback,
		"consumable shares: disabled, memory, unlimited or a positive number of shares (env CONSUMABLE_SHARES)")
}

// SharesFromFlags is what the plugin starts with from --consumable-shares and FEATURE_GATES:
// the gates, and the mode its devices are published in ("": none); an error where NVIDIA's
// plugin refuses the flags and exits before it publishes anything.
func SharesFromFlags(shares, featureGates string) (map[string]bool, string, error) {
	gates := ParseGates(featureGates)
	if err := CheckConsumableShares(shares, gates); err != nil {
		return nil, "", err
	}
	return gates, SharesMode(shares, gates), nil
}

// PublishedDevices are the devices the plugin publishes for gpus in ConsumableShares mode
// "mode" (from SharesFromFlags).
func PublishedDevices(gpus []GPU, mode string) []resourceapi.Device {
	devices := Devices(gpus)
	for i := range devices {
		ApplyConsumableShares(&devices[i], mode)
	}
	return devices
}

// CheckConsumableShares refuses what NVIDIA's validateFlags refuses: any mode but "disabled"
// without the gate, and a mode that is not disabled, memory, unlimited or a positive integer
// (compared untrimmed). The plugin then exits before it publishes anything.
func CheckConsumableShares(mode string, gates map[string]bool) error {
	if mode != SharesDisabled && !gates[SharesGate] {
		return fmt.Errorf("--consumable-shares requires feature gate %s to be enabled", SharesGate)
	}
	if mode != SharesDisabled && mode != "memory" && mode != "unlimited" {
		if n, err := strconv.Atoi(mode); err != nil || n <= 0 {
			return fmt.Errorf("invalid value for --consumable-shares: %q (must be 'disabled', 'memory', 'unlimited', or a positive integer)", mode)
		}
	}
	return nil
}

// SharesMode is the mode devices are published with; "" where there are no shares (the gate
// off, or "disabled"), as the driver's isConsumableSharesEnabled decides.
func SharesMode(mode string, gates map[string]bool) string {
	mode = strings.TrimSpace(mode)
	if !gates[SharesGate] || mode == "" || mode == SharesDisabled {
		return ""
	}
	return mode
}

// ApplyConsumableShares gives a device the shape the 0.5.0 plugin publishes in "mode":
// allowMultipleAllocations, memory rounded down to a multiple of 1Mi with a requestPolicy
// (memory: default the whole card, from 1Mi; unlimited and <N>: default 0, from 0; step 1Mi),
// and for <N> a "shares" capacity of N (default 1, from 1 to N, step 1).
func ApplyConsumableShares(device *resourceapi.Device, mode string) {
	if mode == "" {
		return
	}
	device.AllowMultipleAllocations = ptr.To(true)
	memory, ok := device.Capacity["memory"]
	if !ok {
		return
	}
	step := resource.MustParse("1Mi")
	zero := resource.MustParse("0")
	whole := resource.NewQuantity(memory.Value.Value()/step.Value()*step.Value(), resource.BinarySI)
	memory.Value = whole.DeepCopy()
	policy := func(def, min resource.Quantity) *resourceapi.CapacityRequestPolicy {
		return &resourceapi.CapacityRequestPolicy{Default: ptr.To(def), ValidRange: &resourceapi.CapacityRequestPolicyRange{
			Min: ptr.To(min), Max: ptr.To(whole.DeepCopy()), Step: ptr.To(step.DeepCopy())}}
	}
	switch mode {
	case "memory":
		memory.RequestPolicy = policy(whole.DeepCopy(), step.DeepCopy())
	case "unlimited":
		memory.RequestPolicy = policy(zero.DeepCopy(), zero.DeepCopy())
	default:
		n, err := strconv.Atoi(mode)
		if err != nil || n <= 0 {
			return // CheckConsumableShares refused it at start
		}
		memory.RequestPolicy = policy(zero.DeepCopy(), zero.DeepCopy())
		shares := *resource.NewQuantity(int64(n), resource.DecimalSI)
		one := *resource.NewQuantity(1, resource.DecimalSI)
		device.Capacity["shares"] = resourceapi.DeviceCapacity{Value: shares, RequestPolicy: &resourceapi.CapacityRequestPolicy{
			Default: ptr.To(one.DeepCopy()), ValidRange: &resourceapi.CapacityRequestPolicyRange{
				Min: ptr.To(one.DeepCopy()), Max: ptr.To(shares.DeepCopy()), Step: ptr.To(one.DeepCopy())}}}
	}
	device.Capacity["memory"] = memory
}
