// Command kubeletclient calls a DRA kubelet plugin's NodePrepareResources or
// NodeUnprepareResources over its dra.sock, as the kubelet does (k8s.io/kubelet/pkg/apis/dra/v1),
// and prints the response as JSON. make real-plugin builds it inside an export of NVIDIA's
// repository (its vendor/ has the gRPC and kubelet API modules); it is not part of this
// project's Go module.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
)

func main() {
	socket := flag.String("socket", "", "path of the plugin's dra.sock")
	op := flag.String("op", "prepare", "prepare or unprepare")
	claims := flag.String("claims", "[]", `JSON list of {"namespace","uid","name"}`)
	timeout := flag.Duration("timeout", 60*time.Second, "deadline of the call")
	flag.Parse()

	var list []*drapb.Claim
	if err := json.Unmarshal([]byte(*claims), &list); err != nil {
		fmt.Fprintf(os.Stderr, "-claims: %v\n", err)
		os.Exit(2)
	}
	conn, err := grpc.NewClient("unix://"+*socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "connect %s: %v\n", *socket, err)
		os.Exit(1)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	client := drapb.NewDRAPluginClient(conn)
	var response any
	switch *op {
	case "prepare":
		response, err = client.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: list})
	case "unprepare":
		response, err = client.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: list})
	default:
		fmt.Fprintf(os.Stderr, "-op must be prepare or unprepare, not %q\n", *op)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *op, err)
		os.Exit(1)
	}
	out, _ := json.Marshal(response)
	fmt.Println(string(out))
}
