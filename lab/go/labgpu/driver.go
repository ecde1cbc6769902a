package labgpu

import (
	"context"
	"fmt"
	"os"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"
)

// Driver answers the kubelet's prepare and unprepare calls for one node.
type Driver struct {
	Name   string
	Node   string
	CDIDir string
	// MPSRoot holds one stand-in MPS pipe directory per claim prepared with MPS.
	MPSRoot string
	// Gates are the feature gates the plugin runs with (FEATURE_GATES, as NVIDIA's chart sets it).
	Gates map[string]bool
	// Shares is the ConsumableShares mode devices are published with ("": none). Several
	// claims may then hold one device, each prepared with a CDI spec of its own.
	Shares string
	byName map[string]GPU
}

// NewDriver serves the given inventory.
func NewDriver(name, node, cdiDir, mpsRoot string, gates map[string]bool, gpus []GPU) *Driver {
	byName := make(map[string]GPU, len(gpus))
	for _, gpu := range gpus {
		byName[gpu.Name] = gpu
	}
	return &Driver{Name: name, Node: node, CDIDir: cdiDir, MPSRoot: mpsRoot, Gates: gates, byName: byName}
}

// PrepareResourceClaims writes one CDI spec per claim and returns its device names.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	results := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		results[claim.UID] = d.prepare(ctx, claim)
	}
	return results, nil
}

func (d *Driver) prepare(ctx context.Context, claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	if claim.Status.Allocation == nil {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)}
	}
	sharing, err := SharingFor(d.Name, &claim.Status.Allocation.Devices, d.Gates)
	if err != nil {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("error preparing devices for claim %s/%s:%s: prepare devices failed: %w",
			claim.Namespace, claim.Name, claim.UID, err)}
	}
	if d.Shares != "" {
		for _, s := range sharing {
			if s != nil && s.Strategy == "MPS" {
				// As 0.5.0's applySharingConfig: one MPS daemon cannot serve several claims.
				return kubeletplugin.PrepareResult{Err: fmt.Errorf("error preparing devices for claim %s/%s:%s: prepare devices failed: "+
					"error applying config: MPS sharing is not supported when consumable shares is enabled",
					claim.Namespace, claim.Name, claim.UID)}
			}
		}
	}
	var gpus, mpsGPUs []GPU
	var mps *mpsConfig
	var devices []kubeletplugin.Device
	for _, result := range claim.Status.Allocation.Devices.Results {
		if result.Driver != d.Name || result.Pool != d.Node {
			continue
		}
		gpu, ok := d.byName[result.Device]
		if !ok {
			return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s was allocated %s, which node %s does not have",
				claim.Namespace, claim.Name, result.Device, d.Node)}
		}
		gpus = append(gpus, gpu)
		if s := sharing[result.Device]; s != nil && s.Strategy == "MPS" {
			mpsGPUs, mps = append(mpsGPUs, gpu), s.MpsConfig
		}
		devices = append(devices, kubeletplugin.Device{Requests: []string{result.Request}, PoolName: result.Pool,
			DeviceName: result.Device, CDIDeviceIDs: []string{CDIName(string(claim.UID), gpu.Name)}})
	}
	var edits *cdiContainerEdits
	if len(mpsGPUs) > 0 {
		commands, err := mpsCommands(mps, mpsGPUs)
		if err == nil {
			err = writeMPSDir(MPSDir(d.MPSRoot, string(claim.UID)), commands)
		}
		if err != nil {
			return kubeletplugin.PrepareResult{Err: fmt.Errorf("error applying GPU config to claim %s/%s: %w", claim.Namespace, claim.Name, err)}
		}
		edits = MPSEdits(MPSDir(d.MPSRoot, string(claim.UID)))
	}
	if err := WriteSpec(d.CDIDir, string(claim.UID), gpus, edits); err != nil {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("writing the CDI spec of claim %s/%s: %w", claim.Namespace, claim.Name, err)}
	}
	klog.FromContext(ctx).Info("prepared", "claim", klog.KObj(claim), "devices", len(devices))
	return kubeletplugin.PrepareResult{Devices: devices}
}

// UnprepareResourceClaims removes the claims' CDI specs.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	results := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		err := os.Remove(SpecFile(d.CDIDir, string(claim.UID)))
		if os.IsNotExist(err) {
			err = nil
		}
		if err == nil {
			err = os.RemoveAll(MPSDir(d.MPSRoot, string(claim.UID)))
		}
		results[claim.UID] = err
		klog.FromContext(ctx).Info("unprepared", "claim", claim.NamespacedName)
	}
	return results, nil
}

// HandleError logs what the helper could not do in the background (e.g. publishing slices).
func (d *Driver) HandleError(ctx context.Context, err error, msg string) {
	klog.FromContext(ctx).Error(err, msg)
}
