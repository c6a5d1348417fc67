package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"phonepilot/api"
)

// addDoorFlags adds the flags of a listener's door (api.Door): the names
// and origins of a reverse proxy in front of it.
func addDoorFlags(f *pflag.FlagSet) {
	f.String("allowed-hosts", "", "further Host names clients use, comma-separated (a reverse proxy's name or name:port; loopback names need none); env PHONEPILOT_ALLOWED_HOSTS")
	f.String("allowed-origins", "", "further origins trusted to POST, comma-separated (https://name of a reverse proxy); env PHONEPILOT_ALLOWED_ORIGINS")
}

// behindDoor is h as a listener serves it: every listener of phonepilot
// checks the Host, the origin of state-changing requests and their
// content type before any handler (api.Door).
func behindDoor(ln net.Listener, cfg appConfig, h http.Handler) (http.Handler, error) {
	return api.Door(ln.Addr().String(), cfg.Serve.door(), h)
}

// approvalKey is the key of a person's decisions on this server's waiting
// tasks (api.Config.ApprovalKey): PHONEPILOT_APPROVAL_KEY when set (for a
// script the person trusts to decide), else a fresh random one at every
// start. It is never read from a config file, which a repository could
// plant, and never shown to an MCP client.
func approvalKey(env lookupEnv) (string, error) {
	if env == nil {
		env = os.LookupEnv
	}
	if k, ok := env("PHONEPILOT_APPROVAL_KEY"); ok && strings.TrimSpace(k) != "" {
		k = strings.TrimSpace(k)
		if err := api.CheckToken(k); err != nil {
			return "", fmt.Errorf("PHONEPILOT_APPROVAL_KEY: %w", err)
		}
		return k, nil
	}
	return api.NewApprovalKey(), nil
}

// printApprovalLink tells the person who started phonepilot where they
// decide: the page's address with the approval key in its fragment.
func printApprovalLink(w io.Writer, addr, key string) {
	fmt.Fprintf(w, "approve or deny waiting tasks at %s\n  (this link decides for you: open it yourself, give it to no program or AI client)\n",
		api.ApprovalLink("http://"+addr, key))
}
