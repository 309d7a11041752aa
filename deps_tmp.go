package main

// Temporary: keeps go.mod's dependencies while the packages are written in parallel. Removed at integration.
import (
	_ "charm.land/bubbles/v2/help"
	_ "charm.land/bubbles/v2/key"
	_ "charm.land/bubbles/v2/spinner"
	_ "charm.land/bubbles/v2/textinput"
	_ "charm.land/bubbles/v2/viewport"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/charmbracelet/x/ansi"
	_ "github.com/charmbracelet/x/exp/teatest/v2"
	_ "github.com/charmbracelet/x/vt"
	_ "github.com/creack/pty"
	_ "github.com/sahilm/fuzzy"
	_ "github.com/spf13/pflag"
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/klog/v2"
	_ "sigs.k8s.io/yaml"
)
