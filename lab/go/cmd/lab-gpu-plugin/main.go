// Command lab-gpu-plugin runs the node lab's stand-in DRA driver on one node (see package
// labgpu): it registers with the kubelet, publishes the node's stand-in GPUs and prepares
// claims through CDI until it is stopped.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"path"
	"syscall"

	"dragpu.lab/node/labgpu"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
)

func main() {
	driverName := flag.String("driver-name", "gpu.nvidia.com", "the DRA driver name to register and publish under")
	count := flag.Int("gpus", 2, "stand-in GPUs on this node")
	product := flag.String("product", "NVIDIA L4", "productName attribute of each stand-in GPU")
	memory := flag.String("memory", "23034Mi", "memory of each stand-in GPU, NVML's total (an L4: 23034Mi, not 24Gi)")
	cdiDir := flag.String("cdi-dir", "/var/run/cdi", "where containerd reads CDI specs")
	mpsRoot := flag.String("mps-root", "/var/run/dra-lab-mps", "host directory for the claims' stand-in MPS pipe directories")
	// As NVIDIA's 0.5.0 plugin: --consumable-shares or CONSUMABLE_SHARES, "disabled" unless set;
	// it takes effect only with ConsumableShares=true in FEATURE_GATES.
	shares := labgpu.SharesFlag(flag.CommandLine, os.LookupEnv)
	klog.InitFlags(nil)
	flag.Parse()
	logger := klog.Background()
	node := os.Getenv("NODE_NAME")
	if node == "" {
		logger.Error(nil, "NODE_NAME is not set; give it from the downward API (spec.nodeName)")
		os.Exit(2)
	}
	gates, mode, err := labgpu.SharesFromFlags(*shares, os.Getenv("FEATURE_GATES"))
	if err != nil {
		// NVIDIA's plugin exits here, before it publishes anything, with these words.
		logger.Error(err, "invalid CLI flags")
		os.Exit(1)
	}
	if err := run(*driverName, node, *count, *product, *memory, *cdiDir, *mpsRoot, gates, mode); err != nil {
		logger.Error(err, "lab-gpu-plugin stopped")
		os.Exit(1)
	}
}

func run(driverName, node string, count int, product, memory, cdiDir, mpsRoot string, gates map[string]bool,
	shares string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	config, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	// The helper listens in the kubelet's plugin directory for this driver; it must exist.
	if err := os.MkdirAll(path.Join(kubeletplugin.KubeletPluginsDir, driverName), 0o750); err != nil {
		return err
	}
	gpus := labgpu.Inventory(node, count, product, memory)
	// The sharing gates, off unless named, as NVIDIA's chart renders featureGates.
	driver := labgpu.NewDriver(driverName, node, cdiDir, mpsRoot, gates, gpus)
	driver.Shares = shares
	helper, err := kubeletplugin.Start(ctx, driver, kubeletplugin.DriverName(driverName),
		kubeletplugin.KubeClient(client), kubeletplugin.NodeName(node))
	if err != nil {
		return err
	}
	defer helper.Stop()
	resources := resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{
		node: {Slices: []resourceslice.Slice{{Devices: labgpu.PublishedDevices(gpus, shares)}}},
	}}
	if err := helper.PublishResources(ctx, resources); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("publishing", "driver", driverName, "node", node, "gpus", count, "gates", driver.Gates, "consumableShares", shares)
	<-ctx.Done()
	return nil
}
