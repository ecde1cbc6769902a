// Command gpu-probe is the node lab's smoke-test probe: from inside a container it reports
// the stand-in GPUs that CDI injected (labgpu), in `nvidia-smi -L`'s line format so the
// smoke test's verification reads it as it reads nvidia-smi on a real node. A GPU counts
// only when both its environment variable and its device node are present.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

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
	fmt.Print(out.String())
	// The smoke test reads the container's termination message.
	_ = os.WriteFile("/dev/termination-log", []byte(out.String()), 0o644)
	os.Exit(status)
}
