package labgpu

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// CDIKind names the lab's devices in CDI: "lab.dra.gpu/gpu=<claim UID>-<device>".
const CDIKind = "lab.dra.gpu/gpu"

type cdiSpec struct {
	Version string      `json:"cdiVersion"`
	Kind    string      `json:"kind"`
	Devices []cdiDevice `json:"devices"`
	// Applied once when any device of the spec is injected: the claim's MPS pipe directory.
	ContainerEdits *cdiContainerEdits `json:"containerEdits,omitempty"`
}

type cdiDevice struct {
	Name           string            `json:"name"`
	ContainerEdits cdiContainerEdits `json:"containerEdits"`
}

type cdiContainerEdits struct {
	Env         []string        `json:"env,omitempty"`
	DeviceNodes []cdiDeviceNode `json:"deviceNodes,omitempty"`
	Mounts      []cdiMount      `json:"mounts,omitempty"`
}

type cdiMount struct {
	HostPath      string   `json:"hostPath"`
	ContainerPath string   `json:"containerPath"`
	Options       []string `json:"options"`
}

// MPSEdits connect a container to a claim's (stand-in) MPS control daemon as NVIDIA's
// plugin does: the pipe directory bind-mounted at /tmp/nvidia-mps and named in
// CUDA_MPS_PIPE_DIRECTORY.
func MPSEdits(hostDir string) *cdiContainerEdits {
	return &cdiContainerEdits{
		Env: []string{"CUDA_MPS_PIPE_DIRECTORY=" + MPSPipeInContainer},
		Mounts: []cdiMount{{HostPath: hostDir, ContainerPath: MPSPipeInContainer,
			Options: []string{"ro", "nosuid", "nodev", "bind"}}},
	}
}

type cdiDeviceNode struct {
	Path     string `json:"path"`
	HostPath string `json:"hostPath"`
	Type     string `json:"type"`
	Major    int64  `json:"major"`
	Minor    int64  `json:"minor"`
	// Readable by the probe, which runs as a non-root user.
	FileMode uint32 `json:"fileMode"`
}

// SpecFile is where a claim's CDI spec lives; one file per claim, removed on unprepare.
func SpecFile(dir, claimUID string) string {
	return filepath.Join(dir, fmt.Sprintf("lab.dra.gpu-claim_%s.json", claimUID))
}

// CDIName is the device's fully qualified CDI name within a claim.
func CDIName(claimUID, device string) string {
	return fmt.Sprintf("%s=%s-%s", CDIKind, claimUID, device)
}

// WriteSpec writes the CDI spec for a claim's devices atomically (containerd may read it
// at any moment). Edits, when not nil, apply to the whole claim.
func WriteSpec(dir, claimUID string, gpus []GPU, edits *cdiContainerEdits) error {
	spec := cdiSpec{Version: "0.6.0", Kind: CDIKind, ContainerEdits: edits}
	for _, gpu := range gpus {
		spec.Devices = append(spec.Devices, cdiDevice{
			Name: fmt.Sprintf("%s-%s", claimUID, gpu.Name),
			ContainerEdits: cdiContainerEdits{
				Env: []string{fmt.Sprintf("DRA_LAB_GPU_%d=%s", gpu.Minor, gpu.UUID),
					fmt.Sprintf("DRA_LAB_GPU_%d_PRODUCT=%s", gpu.Minor, gpu.Product)},
				DeviceNodes: []cdiDeviceNode{{Path: fmt.Sprintf("/dev/dra-lab-gpu%d", gpu.Minor),
					HostPath: "/dev/null", Type: "c", Major: 1, Minor: 3, FileMode: 0o666}},
			},
		})
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := SpecFile(dir, claimUID) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, SpecFile(dir, claimUID))
}
