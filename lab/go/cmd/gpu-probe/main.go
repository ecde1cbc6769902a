// Command gpu-probe is the node lab's smoke-test probe: from inside a container it reports
// the stand-in GPUs that CDI injected (labgpu), in `nvidia-smi -L`'s line format so the
// smoke test's verification reads it as it reads nvidia-smi on a real node. A GPU counts
// only when both its environment variable and its device node are present.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// reportMPS prints what a container of an MPS claim is connected to: the pipe directory
// NVIDIA's plugin names in CUDA_MPS_PIPE_DIRECTORY and, from the node lab's stand-in daemon
// in that directory, the limits it was started with (on a real node: ask the daemon,
// `echo get_default_active_thread_percentage | nvidia-cuda-mps-control`). False when the
// variable names a directory that was not mounted.
func reportMPS(out *strings.Builder) bool {
	dir := os.Getenv("CUDA_MPS_PIPE_DIRECTORY")
	if dir == "" {
		return true
	}
	fmt.Fprintf(out, "CUDA_MPS_PIPE_DIRECTORY=%s\n", dir)
	// labgpu.MPSCommandsFile, named again here so the probe's image does not carry client-go.
	data, err := os.ReadFile(filepath.Join(dir, "control-daemon.commands"))
	if err != nil {
		fmt.Fprintf(out, "error: no MPS control daemon at %s: %v\n", dir, err)
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line != "" {
			fmt.Fprintf(out, "MPS control daemon: %s\n", line)
		}
	}
	return true
}

func main() {
	var minors []int
	for _, entry := range os.Environ() {
		name, _, _ := strings.Cut(entry, "=")
		if rest, ok := strings.CutPrefix(name, "DRA_LAB_GPU_"); ok {
			if minor, err := strconv.Atoi(rest); err == nil {
				minors = append(minors, minor)
			}
		}
	}
	sort.Ints(minors)
	var out strings.Builder
	status := 0
	for _, minor := range minors {
		node := fmt.Sprintf("/dev/dra-lab-gpu%d", minor)
		info, err := os.Stat(node)
		if err != nil || info.Mode()&os.ModeCharDevice == 0 {
			fmt.Fprintf(&out, "error: GPU %d has no device node %s\n", minor, node)
			status = 1
			continue
		}
		fmt.Fprintf(&out, "GPU %d: %s (UUID: %s)\n", minor, os.Getenv(fmt.Sprintf("DRA_LAB_GPU_%d_PRODUCT", minor)),
			os.Getenv(fmt.Sprintf("DRA_LAB_GPU_%d", minor)))
	}
	if len(minors) == 0 {
		out.WriteString("no GPU: no DRA_LAB_GPU_* variable was injected\n")
		status = 1
	}
	if !reportMPS(&out) {
		status = 1
	}
	fmt.Print(out.String())
	// The smoke test reads the container's termination message.
	_ = os.WriteFile("/dev/termination-log", []byte(out.String()), 0o644)
	os.Exit(status)
}
