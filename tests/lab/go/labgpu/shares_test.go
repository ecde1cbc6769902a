package labgpu

import (
	"encoding/json"
	"strings"
	"testing"
)

// The stand-in's devices in each ConsumableShares mode, as JSON, equal what NVIDIA's 0.5.0
// plugin published for an L4 (23034Mi) on the lab's API server (compared by hand, docs/testing.md).
func TestConsumableSharesShapes(t *testing.T) {
	want := map[string]string{
		"memory":    `{"memory":{"value":"23034Mi","requestPolicy":{"default":"23034Mi","validRange":{"min":"1Mi","max":"23034Mi","step":"1Mi"}}}}`,
		"unlimited": `{"memory":{"value":"23034Mi","requestPolicy":{"default":"0","validRange":{"min":"0","max":"23034Mi","step":"1Mi"}}}}`,
		"4": `{"memory":{"value":"23034Mi","requestPolicy":{"default":"0","validRange":{"min":"0","max":"23034Mi","step":"1Mi"}}},` +
			`"shares":{"value":"4","requestPolicy":{"default":"1","validRange":{"min":"1","max":"4","step":"1"}}}}`,
	}
	for mode, capacity := range want {
		// 24152899584 B plus 1000 B: rounded down to 23034Mi
		device := Devices(Inventory("w1", 1, "NVIDIA L4", "24152900584"))[0]
		ApplyConsumableShares(&device, mode)
		got, _ := json.Marshal(device.Capacity)
		if string(got) != capacity {
			t.Errorf("mode %s: capacity\n%s\nwant\n%s", mode, got, capacity)
		}
		if device.AllowMultipleAllocations == nil || !*device.AllowMultipleAllocations {
			t.Errorf("mode %s: allowMultipleAllocations not true", mode)
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
