package labgpu

// Sharing: the opaque GpuConfig of NVIDIA's driver (resource.nvidia.com/v1beta1), as the
// node lab's stand-in plugin prepares it. Read from kubernetes-sigs/dra-driver-nvidia-gpu at
// v0.4.1 (api/nvidia.com/resource/v1beta1, cmd/gpu-kubelet-plugin/sharing.go and
// templates/mps-control-daemon.tmpl.yaml) and written here in our own words:
//   - configs come from the allocation, the class's first and the claim's after them; the
//     last one that applies to a device's request wins;
//   - the parameters are decoded strictly (an unknown field fails the prepare, so the pod
//     never starts);
//   - TimeSlicing and MPS need the feature gates TimeSlicingSettings and MPSSupport, read
//     from FEATURE_GATES as the chart renders them;
//   - MPS: NVIDIA starts a control daemon per claim with the limits
//     (set_default_active_thread_percentage, set_default_device_pinned_mem_limit <uuid> <N>M)
//     and gives each container only CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps, a bind mount of
//     the daemon's pipe directory. The stand-in has no daemon: it writes the commands the
//     daemon would have been started with into that directory, so a container can read, from
//     inside, the limits its claim's daemon enforces.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	ConfigAPIVersion = "resource.nvidia.com/v1beta1"
	GateTimeSlicing  = "TimeSlicingSettings"
	GateMPS          = "MPSSupport"
	// MPSPipeInContainer is where NVIDIA's plugin mounts the daemon's pipe directory.
	MPSPipeInContainer = "/tmp/nvidia-mps"
	// MPSCommandsFile holds, in the stand-in's pipe directory, the daemon's start-up commands.
	MPSCommandsFile = "control-daemon.commands"
)

var intervals = map[string]bool{"Default": true, "Short": true, "Medium": true, "Long": true}

type gpuConfig struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Sharing    *gpuSharing `json:"sharing,omitempty"`
}

type gpuSharing struct {
	Strategy          string             `json:"strategy"`
	TimeSlicingConfig *timeSlicingConfig `json:"timeSlicingConfig,omitempty"`
	MpsConfig         *mpsConfig         `json:"mpsConfig,omitempty"`
}

type timeSlicingConfig struct {
	Interval string `json:"interval"`
}

type mpsConfig struct {
	DefaultActiveThreadPercentage     *int                         `json:"defaultActiveThreadPercentage,omitempty"`
	DefaultPinnedDeviceMemoryLimit    *resource.Quantity           `json:"defaultPinnedDeviceMemoryLimit,omitempty"`
	DefaultPerDevicePinnedMemoryLimit map[string]resource.Quantity `json:"defaultPerDevicePinnedMemoryLimit,omitempty"`
}

// ParseGates reads FEATURE_GATES ("A=true,B=false,").
func ParseGates(text string) map[string]bool {
	gates := map[string]bool{}
	for _, item := range strings.Split(text, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(item), "=")
		if name != "" {
			gates[name] = strings.EqualFold(strings.TrimSpace(value), "true")
		}
	}
	return gates
}

func decodeConfig(raw []byte) (*gpuConfig, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	if head.APIVersion != ConfigAPIVersion || head.Kind != "GpuConfig" {
		// The stand-in has full GPUs only; NVIDIA's other kinds (MIG, VFIO) never apply here.
		return nil, fmt.Errorf("no kind %q is registered for version %q in the node lab's stand-in", head.Kind, head.APIVersion)
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.DisallowUnknownFields()
	config := &gpuConfig{}
	if err := decoder.Decode(config); err != nil {
		return nil, fmt.Errorf("strict decoding error: %w", err)
	}
	return config, nil
}

func validate(sharing *gpuSharing, gates map[string]bool) error {
	switch sharing.Strategy {
	case "TimeSlicing":
		if !gates[GateTimeSlicing] {
			return fmt.Errorf("%q is selected as the GPU sharing strategy, but the %q feature gate is not enabled", sharing.Strategy, GateTimeSlicing)
		}
		interval := "Default"
		if sharing.TimeSlicingConfig != nil {
			interval = sharing.TimeSlicingConfig.Interval
		}
		if !intervals[interval] {
			return fmt.Errorf("unknown time-slice interval: %s", interval)
		}
		if sharing.MpsConfig != nil {
			return fmt.Errorf("cannot use MpsConfig with the 'TimeSlicing' strategy")
		}
	case "MPS":
		if !gates[GateMPS] {
			return fmt.Errorf("%q is selected as the GPU sharing strategy, but the %q feature gate is not enabled", sharing.Strategy, GateMPS)
		}
		if sharing.TimeSlicingConfig != nil {
			return fmt.Errorf("cannot use TimeSlicingConfig with the 'MPS' strategy")
		}
		if mps := sharing.MpsConfig; mps != nil && mps.DefaultActiveThreadPercentage != nil &&
			(*mps.DefaultActiveThreadPercentage < 0 || *mps.DefaultActiveThreadPercentage > 100) {
			return fmt.Errorf("active thread percentage must be from 0 to 100")
		}
	default:
		return fmt.Errorf("unknown GPU sharing strategy: %s, supported GPU sharing strategies: TimeSlicing, MPS", sharing.Strategy)
	}
	return nil
}

// SharingFor returns the sharing each allocated device of ours is prepared with (nil: none),
// by device name, or the error NVIDIA's plugin would fail the prepare with.
func SharingFor(driver string, allocation *resourceapi.DeviceAllocationResult, gates map[string]bool) (map[string]*gpuSharing, error) {
	type candidate struct {
		requests []string
		config   *gpuConfig
	}
	var ordered []resourceapi.DeviceAllocationConfiguration
	for _, source := range []resourceapi.AllocationConfigSource{resourceapi.AllocationConfigSourceClass, resourceapi.AllocationConfigSourceClaim} {
		for _, entry := range allocation.Config {
			if entry.Source == source {
				ordered = append(ordered, entry)
			}
		}
	}
	var candidates []candidate
	for _, entry := range ordered {
		if entry.Opaque == nil || entry.Opaque.Driver != driver {
			continue
		}
		config, err := decodeConfig(entry.Opaque.Parameters.Raw)
		if err != nil {
			return nil, fmt.Errorf("error decoding config parameters: %w", err)
		}
		candidates = append(candidates, candidate{entry.Requests, config})
	}
	chosen := map[string]*gpuSharing{}
	for _, result := range allocation.Results {
		if result.Driver != driver {
			continue
		}
		chosen[result.Device] = nil
		for i := len(candidates) - 1; i >= 0; i-- {
			c := candidates[i]
			if len(c.requests) == 0 || slices.Contains(c.requests, result.Request) {
				chosen[result.Device] = c.config.Sharing
				break
			}
		}
		if sharing := chosen[result.Device]; sharing != nil {
			if err := validate(sharing, gates); err != nil {
				return nil, fmt.Errorf("error validating GPU config: %w", err)
			}
		}
	}
	return chosen, nil
}

// mpsCommands are the daemon's start-up commands for the claim's MPS devices, as NVIDIA's
// template runs them: the active thread percentage, then one pinned-memory limit per UUID
// in whole MiB ("<N>M").
func mpsCommands(mps *mpsConfig, gpus []GPU) ([]string, error) {
	var commands []string
	if mps == nil {
		return commands, nil
	}
	if mps.DefaultActiveThreadPercentage != nil {
		commands = append(commands, fmt.Sprintf("set_default_active_thread_percentage %d", *mps.DefaultActiveThreadPercentage))
	}
	limits := map[string]string{}
	if mps.DefaultPinnedDeviceMemoryLimit != nil {
		megabyte, err := megabytes(*mps.DefaultPinnedDeviceMemoryLimit)
		if err != nil {
			return nil, fmt.Errorf("error transforming DefaultPerDevicePinnedMemoryLimit into string: default %w", err)
		}
		for _, gpu := range gpus {
			limits[gpu.UUID] = megabyte
		}
	}
	for key, value := range mps.DefaultPerDevicePinnedMemoryLimit {
		uuid := key
		if index, err := strconv.Atoi(key); err == nil {
			if index < 0 || index >= len(gpus) {
				return nil, fmt.Errorf("invalid device index: %d", index)
			}
			uuid = gpus[index].UUID
		} else if !hasUUID(gpus, key) {
			return nil, fmt.Errorf("unable to parse key as an integer: %s", key)
		}
		megabyte, err := megabytes(value)
		if err != nil {
			return nil, fmt.Errorf("error transforming DefaultPerDevicePinnedMemoryLimit into string: %s %w", key, err)
		}
		limits[uuid] = megabyte
	}
	uuids := make([]string, 0, len(limits))
	for uuid := range limits {
		uuids = append(uuids, uuid)
	}
	sort.Strings(uuids)
	for _, uuid := range uuids {
		commands = append(commands, fmt.Sprintf("set_default_device_pinned_mem_limit %s %s", uuid, limits[uuid]))
	}
	return commands, nil
}

func megabytes(quantity resource.Quantity) (string, error) {
	value := quantity.Value() / 1024 / 1024
	if value <= 0 {
		return "", fmt.Errorf("invalid limit: value set too low: %s", quantity.String())
	}
	return fmt.Sprintf("%dM", value), nil
}

func hasUUID(gpus []GPU, uuid string) bool {
	for _, gpu := range gpus {
		if gpu.UUID == uuid {
			return true
		}
	}
	return false
}

// MPSDir is the host directory standing in for a claim's MPS daemon pipe directory.
func MPSDir(root, claimUID string) string {
	return filepath.Join(root, claimUID)
}

// writeMPSDir writes the daemon's commands where the container will find them.
func writeMPSDir(dir string, commands []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data := []byte(strings.Join(commands, "\n") + "\n")
	return os.WriteFile(filepath.Join(dir, MPSCommandsFile), data, 0o644)
}
