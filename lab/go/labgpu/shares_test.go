package labgpu

import (
	"strings"
	"testing"
)

// The shapes themselves are compared with NVIDIA's plugin's entries in realplugin_test.go;
// here what those entries cannot show: NVML's byte total is rounded down to a multiple of 1Mi
// in every mode, and without the gate a device does not change.
func TestConsumableSharesShapes(t *testing.T) {
	for _, mode := range []string{"memory", "unlimited", "4"} {
		// 24152899584 B plus 1000 B: rounded down to 23034Mi
		device := Devices(Inventory("w1", 1, "NVIDIA L4", "24152900584"))[0]
		ApplyConsumableShares(&device, mode)
		memory := device.Capacity["memory"]
		if got := memory.Value.String(); got != "23034Mi" || memory.RequestPolicy.ValidRange.Max.String() != "23034Mi" {
			t.Errorf("mode %s: memory %s, max %s, want 23034Mi", mode, got, memory.RequestPolicy.ValidRange.Max)
		}
	}
	device := Devices(Inventory("w1", 1, "NVIDIA L4", "23034Mi"))[0]
	ApplyConsumableShares(&device, SharesMode("memory", map[string]bool{}))
	if device.AllowMultipleAllocations != nil || device.Capacity["memory"].RequestPolicy != nil {
		t.Errorf("without the gate the device must not change: %+v", device)
	}
}

func TestConsumableSharesFlagsAsNVIDIAChecksThem(t *testing.T) {
	on := map[string]bool{SharesGate: true}
	for _, c := range []struct {
		mode  string
		gates map[string]bool
		err   string
		share string
	}{
		{"disabled", map[string]bool{}, "", ""},
		{"disabled", on, "", ""},
		{"memory", on, "", "memory"},
		{"4", on, "", "4"},
		{"+4", on, "", "+4"},
		{"memory", map[string]bool{}, "requires feature gate ConsumableShares", ""},
		{"0", on, `invalid value for --consumable-shares: "0"`, ""},
		{"", on, `invalid value for --consumable-shares: ""`, ""},
		{"Memory", on, "invalid value", ""},
	} {
		err := CheckConsumableShares(c.mode, c.gates)
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q %v: error %v, want %q", c.mode, c.gates, err, c.err)
		}
		if err == nil && SharesMode(c.mode, c.gates) != c.share {
			t.Errorf("%q %v: mode %q, want %q", c.mode, c.gates, SharesMode(c.mode, c.gates), c.share)
		}
	}
}
