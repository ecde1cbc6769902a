package labgpu

import (
	"sort"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
)

// The stand-in's devices carry only attribute names NVIDIA's driver v0.4.1 publishes (no
// "index", which v25.8 dropped) and memory as the driver sends NVML's byte total.
func TestDevicesLookLikeNVIDIAs(t *testing.T) {
	devices := Devices(Inventory("w1", 3, "NVIDIA L4", "24152899584"))
	var names []string
	for _, device := range devices {
		names = append(names, device.Name)
		for _, gone := range []string{"index", "minor", "resource.kubernetes.io/numaNode"} {
			if _, ok := device.Attributes[resourceapi.QualifiedName(gone)]; ok {
				t.Errorf("%s publishes %q, which NVIDIA's driver v0.4.1 does not", device.Name, gone)
			}
		}
		memory := device.Capacity["memory"].Value
		if got := memory.String(); got != "23034Mi" {
			t.Errorf("%s: memory %s, want 23034Mi (NVML's total of an L4, in bytes, as BinarySI)", device.Name, got)
		}
	}
	sort.Strings(names)
	if len(names) != 3 || names[0] != "gpu-0" || names[2] != "gpu-2" {
		t.Errorf("device names %v", names)
	}
}
