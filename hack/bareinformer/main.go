// Command bareinformer runs one typed pod informer over all namespaces and nothing else: the
// floor a client-go program pays to hold every pod (BENCHMARKS.md's "bare typed informer" column). It
// prints "synced <n>" once the informer has synced and then waits, holding its cache, until it
// is signalled or --max ends. hack/benchscale starts it and reads its RSS from /proc.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := pflag.String("kubeconfig", "", "kubeconfig (required)")
	protobuf := pflag.Bool("protobuf", true, "ask for protobuf, as doomwatch does (false: client-go's default, JSON)")
	maxLife := pflag.Duration("max", 30*time.Minute, "exit after this long in any case")
	noGzip := pflag.Bool("disable-compression", false, "do not ask for gzip, as doomwatch's and kubectl's flag of that name")
	pflag.Parse()
	if err := run(*kubeconfig, *protobuf, *noGzip, *maxLife); err != nil {
		fmt.Fprintln(os.Stderr, "bareinformer:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, protobuf, noGzip bool, maxLife time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, maxLife)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.DisableCompression = noGzip
	if protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Pods().Informer()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("pod informer did not sync: %w", ctx.Err())
	}
	fmt.Printf("synced %d\n", len(inf.GetStore().ListKeys()))
	<-ctx.Done()
	factory.Shutdown()
	return nil
}
