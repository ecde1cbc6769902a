// Package labgpu is the node lab's stand-in for NVIDIA's DRA driver (gpu.nvidia.com): a real
// DRA kubelet plugin, built on k8s.io/dynamic-resource-allocation's kubeletplugin helper,
// whose "GPUs" are entries in a table. It publishes them in a ResourceSlice with the
// attribute names NVIDIA's driver uses and hands an allocated one to a container through
// CDI: an environment variable with its UUID and a device node (/dev/null underneath). No
// GPU is touched; what is real is the DRA path: slices, allocation, the kubelet's
// NodePrepareResources call, the CDI spec and containerd's injection.
package labgpu

import (
	"crypto/sha1"
	"fmt"
	"math/rand"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// GPU is one stand-in device.
type GPU struct {
	Minor   int
	Name    string
	UUID    string
	Product string
	Memory  string
}

// Inventory lists a node's stand-in GPUs; the UUIDs depend only on node and minor, so a
// restarted plugin publishes the same devices.
func Inventory(node string, count int, product, memory string) []GPU {
	gpus := make([]GPU, 0, count)
	for minor := 0; minor < count; minor++ {
		sum := sha1.Sum([]byte(fmt.Sprintf("%s/gpu/%d", node, minor)))
		uuid := fmt.Sprintf("GPU-%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
		gpus = append(gpus, GPU{Minor: minor, Name: fmt.Sprintf("gpu-%d", minor), UUID: uuid,
			Product: product, Memory: memory})
	}
	return gpus
}

// Devices is the inventory as ResourceSlice devices, with attribute names NVIDIA's driver
// (v0.4.1) uses: no "index" or "minor" (gone since v25.8) and no numaNode (no release has
// it). Memory goes out as the driver sends NVML's byte total, a BinarySI quantity of bytes
// (23034Mi for an L4 of 24152899584 bytes). Like the driver, which builds the slice from a
// map, the devices come in no fixed order.
func Devices(gpus []GPU) []resourceapi.Device {
	devices := make([]resourceapi.Device, 0, len(gpus))
	for _, gpu := range gpus {
		memory := resource.MustParse(gpu.Memory)
		devices = append(devices, resourceapi.Device{
			Name: gpu.Name,
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"type":        {StringValue: ptr.To("gpu")},
				"uuid":        {StringValue: ptr.To(gpu.UUID)},
				"productName": {StringValue: ptr.To(gpu.Product)},
				"brand":       {StringValue: ptr.To("Nvidia")},
			},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
				"memory": {Value: *resource.NewQuantity(memory.Value(), resource.BinarySI)},
			},
		})
	}
	rand.Shuffle(len(devices), func(i, j int) { devices[i], devices[j] = devices[j], devices[i] })
	return devices
}
