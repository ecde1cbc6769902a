// Command pause is the node lab's stand-in for Kubernetes' pause image (a C program there):
// the first process of every pod sandbox. It holds the sandbox's namespaces open, reaps
// orphaned children (it is PID 1 of the pod when the PID namespace is shared) and exits
// cleanly when the runtime stops the sandbox. Like the real one, `pause -v` prints a version
// and exits: kubeadm's upgrade health check runs it so as a Job and waits for it to complete.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (dra.gpu node lab stand-in)")
		return
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reapChildren()
	}
}

func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
