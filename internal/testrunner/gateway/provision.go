package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/template"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/portainer"
)

func workerStack(stand string) string { return "tr-worker-" + stand }
func emulatorStack(env string) string { return "mcp-tr-emul-" + env }

// Inside the stack network a stack's service is reachable by its
// container name.
func workerURL(stand string) string { return "http://" + workerStack(stand) + ":8083" }
func emulatorURL(env string) string { return "http://" + emulatorStack(env) + ":8555" }

// The emulator stack's second service is the emulator MCP tool server the
// worker's cases call (mcp_servers "emulator=...").
func emulatorToolsContainer(env string) string { return emulatorStack(env) + "-tools" }
func emulatorToolsURL(env string) string {
	return "http://" + emulatorToolsContainer(env) + ":8558/mcp"
}

// The stacks run the same cpesuite image as the gateway. Names are
// validated lower-case identifiers before they reach a template; secrets
// travel as stack environment variables, never in the compose text.
var (
	workerCompose = template.Must(template.New("worker").Parse(`services:
  worker:
    image: {{.Image}}
    container_name: {{.Container}}
    command: ["run", "worker"]
    environment:
      CPESUITE_TESTRUNNER_SECRET: ${CPESUITE_TESTRUNNER_SECRET}
      CPESUITE_DATA_DIR: /data
      CPESUITE_WORKER_ADDR: ":8083"
    volumes:
      - data:/data
    networks: [testrunner]
    restart: unless-stopped
volumes:
  data: {}
networks:
  testrunner:
    external: true
    name: {{.Network}}
`))
	emulatorCompose = template.Must(template.New("emulator").Parse(`services:
  emulator:
    image: {{.Image}}
    container_name: {{.Container}}
    command: ["run", "tr069-emulator"]
    environment:
      CPESUITE_DATA_DIR: /data
      CPESUITE_TR069_EMULATOR_ADDR: ":8555"
    volumes:
      - data:/data
    networks: [testrunner]
    restart: unless-stopped
  tools:
    image: {{.Image}}
    container_name: {{.Container}}-tools
    command: ["run", "mcp-emulator"]
    environment:
      CPESUITE_DATA_DIR: /data
      CPESUITE_MCP_EMULATOR_ADDR: ":8558"
      CPESUITE_MCP_EMULATOR_EMULATOR_URL: "http://{{.Container}}:8555"
{{- if .ACSURL}}
      CPESUITE_MCP_EMULATOR_ACS_URL: "{{.ACSURL}}"
{{- end}}
    networks: [testrunner]
    depends_on: [emulator]
    restart: unless-stopped
volumes:
  data: {}
networks:
  testrunner:
    external: true
    name: {{.Network}}
`))
)

type composeVars struct{ Image, Container, Network, ACSURL string }

func render(t *template.Template, v composeVars) string {
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		panic(err) // the templates and their inputs are ours and validated
	}
	return b.String()
}

// checkComposeURL admits a profile's acs_url into the compose text only
// as a plain http(s) URL: quotes, backslashes, white space and "$" (compose
// substitution) could otherwise change the stack definition.
func checkComposeURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(v, "\"\\$'` \t\r\n") {
		return apperr.Invalid("INVALID_SETTING", "setting acs_url must be a plain http or https URL to provision the emulator stack")
	}
	return nil
}

// provisioned is what the API reports about a created stack.
type provisioned struct {
	Stack   string `json:"stack"`
	StackID int    `json:"stack_id"`
	URL     string `json:"url"`
}

// provisionEmulator creates the emulator wrapper stack of a new env: the
// TR-069 emulator and its MCP tool server, which calls the ACS at acsURL
// (the profile's acs_url; empty leaves the tool server's default).
func (g *Gateway) provisionEmulator(ctx context.Context, env, acsURL string) (*provisioned, error) {
	if g.pt == nil {
		return nil, errNotConfigured
	}
	if err := checkComposeURL(acsURL); err != nil {
		return nil, err
	}
	name := emulatorStack(env)
	st, err := g.pt.CreateStack(ctx, name, render(emulatorCompose, composeVars{Image: g.cfg.EmulatorImage, Container: name, Network: g.cfg.StackNetwork, ACSURL: acsURL}), nil)
	if errors.Is(err, apperr.ErrConflict) {
		// Provisioned before (a profile deleted without teardown, or
		// provision=true again): the existing stack serves.
		st, err = g.pt.StackByName(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	return &provisioned{Stack: name, StackID: st.ID, URL: emulatorURL(env)}, nil
}

// provisionWorker creates a worker stack and registers it as a stand.
func (g *Gateway) provisionWorker(w http.ResponseWriter, r *http.Request) error {
	if g.pt == nil {
		return errNotConfigured
	}
	var b struct {
		Name string `json:"name"`
	}
	if r.ContentLength != 0 {
		if err := decode(r, &b); err != nil {
			return err
		}
	}
	ctx := r.Context()
	if b.Name == "" {
		n, err := g.nextWorkerName(ctx)
		if err != nil {
			return err
		}
		b.Name = n
	} else if err := checkName(b.Name); err != nil {
		return invalidField("name", err)
	}
	if _, err := g.fleet.stand(ctx, b.Name); err == nil {
		return apperr.Conflict("STAND_EXISTS", "stand %q already exists", b.Name)
	}
	stack := workerStack(b.Name)
	env := []portainer.EnvVar{{Name: "CPESUITE_TESTRUNNER_SECRET", Value: string(g.secret)}}
	created, err := g.pt.CreateStack(ctx, stack, render(workerCompose, composeVars{Image: g.cfg.WorkerImage, Container: stack, Network: g.cfg.StackNetwork}), env)
	if err != nil {
		g.audit(r, "worker_provision", b.Name, apperr.PublicMessage(err), false)
		return err
	}
	st, _, err := g.fleet.upsertStand(ctx, Stand{Name: b.Name, BaseURL: workerURL(b.Name), Display: "worker " + b.Name, Enabled: true}, g.now().UTC())
	if err != nil {
		return err
	}
	g.audit(r, "worker_provision", b.Name, fmt.Sprintf("stack %s id %d", stack, created.ID), true)
	return httpx.WriteJSON(w, http.StatusCreated, map[string]any{
		"name": b.Name, "stand": st, "stack": provisioned{Stack: stack, StackID: created.ID, URL: st.BaseURL},
	})
}

// nextWorkerName is w<N> with the smallest N that no stand and no stack
// uses yet.
func (g *Gateway) nextWorkerName(ctx context.Context) (string, error) {
	used := map[string]bool{}
	stands, err := g.fleet.stands(ctx)
	if err != nil {
		return "", err
	}
	for _, s := range stands {
		used[s.Name] = true
	}
	stacks, err := g.pt.Stacks(ctx)
	if err != nil {
		return "", err
	}
	for _, s := range stacks {
		if n, ok := strings.CutPrefix(s.Name, "tr-worker-"); ok {
			used[n] = true
		}
	}
	for i := 1; ; i++ {
		if n := "w" + strconv.Itoa(i); !used[n] {
			return n, nil
		}
	}
}
