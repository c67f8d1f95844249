package portainertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"cpesuite/internal/testrunner/portainer"
)

// Messages of Portainer's stack handlers (api/http/handler/stacks).
const (
	msgStackNotFound    = "Unable to find a stack with the specified identifier inside the database"
	msgEndpointNotFound = "Unable to find an environment with the specified identifier inside the database"
	msgStackEPNotFound  = "Unable to find the endpoint associated to the stack inside the database"
	msgBadEndpointID    = "Invalid query parameter: endpointId"
	msgBadStackID       = "Invalid stack identifier route variable"
	msgBadPayload       = "Invalid request payload"
	detailNotFound      = "Object not found inside the database"
)

// normalizeRe is Portainer's stack name normalisation: lower-case, then drop
// everything outside [-_a-z0-9].
var normalizeRe = regexp.MustCompile(`[^-_a-z0-9]+`)

func (s *Server) listStacks(w http.ResponseWriter, r *http.Request) {
	var filters struct {
		SwarmID    string `json:"SwarmID"`
		EndpointID int    `json:"EndpointID"`
	}
	if raw := r.URL.Query().Get("filters"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &filters); err != nil {
			writeError(w, http.StatusBadRequest, "Invalid query parameter: filters", err.Error())
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*stack{}
	for _, st := range s.sortedStacks() {
		// Portainer's filterStacks: compose stacks by environment.
		if filters.EndpointID == 0 && filters.SwarmID == "" ||
			st.Type == portainer.StackTypeCompose && st.EndpointID == filters.EndpointID {
			out = append(out, st)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createStack(w http.ResponseWriter, r *http.Request) {
	if typ, method := r.PathValue("type"), r.PathValue("method"); typ != "standalone" || method != "string" {
		writeError(w, http.StatusBadRequest, "Invalid value for path parameter: type or method",
			fmt.Sprintf("the double supports standalone/string only, got %s/%s", typ, method))
		return
	}
	epID, ok := queryEndpointID(w, r, true)
	if !ok {
		return
	}
	var p struct {
		Name             string
		StackFileContent string
		Env              []portainer.EnvVar
	}
	decodeErr := json.NewDecoder(r.Body).Decode(&p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.endpoint(epID); !ok {
		writeError(w, http.StatusNotFound, msgEndpointNotFound, detailNotFound)
		return
	}
	switch {
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, msgBadPayload, decodeErr.Error())
		return
	case p.Name == "":
		writeError(w, http.StatusBadRequest, msgBadPayload, "Invalid stack name")
		return
	case p.StackFileContent == "":
		writeError(w, http.StatusBadRequest, msgBadPayload, "Invalid stack file content")
		return
	}
	name := normalizeRe.ReplaceAllString(strings.ToLower(p.Name), "")
	for _, st := range s.stacks {
		if strings.EqualFold(st.Name, name) && st.EndpointID == epID {
			msg := fmt.Sprintf("A stack with the normalized name '%s' already exists", name)
			writeError(w, http.StatusConflict, msg, msg)
			return
		}
	}
	st := &stack{ID: s.nextID, Name: name, Type: portainer.StackTypeCompose, EndpointID: epID,
		EntryPoint: "docker-compose.yml", Env: p.Env, Status: portainer.StackStatusActive,
		ProjectPath: fmt.Sprintf("/data/compose/%d", s.nextID), CreatedBy: Username, file: p.StackFileContent}
	s.nextID++
	s.stacks[st.ID] = st
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) updateStack(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id", msgBadStackID)
	if !ok {
		return
	}
	epID, ok := queryEndpointID(w, r, true)
	if !ok {
		return
	}
	var p struct {
		StackFileContent string
		Env              []portainer.EnvVar
		Prune            bool
		PullImage        bool
	}
	decodeErr := json.NewDecoder(r.Body).Decode(&p)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.stacks[id]
	if !ok {
		writeError(w, http.StatusNotFound, msgStackNotFound, detailNotFound)
		return
	}
	if _, ok := s.endpoint(epID); !ok {
		writeError(w, http.StatusNotFound, "Unable to find the environment associated to the stack inside the database", detailNotFound)
		return
	}
	switch {
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, msgBadPayload, decodeErr.Error())
		return
	case p.StackFileContent == "":
		writeError(w, http.StatusBadRequest, msgBadPayload, "Invalid stack file content")
		return
	}
	// Portainer moves the stack to the environment the request names.
	st.EndpointID = epID
	st.Env = p.Env
	st.file = p.StackFileContent
	st.Option = &struct{ Prune bool }{p.Prune}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) deleteStack(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id", msgBadStackID)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.stacks[id]; !ok {
		writeError(w, http.StatusNotFound, msgStackNotFound, detailNotFound)
		return
	}
	// Portainer reads endpointId as optional here and then looks up
	// environment 0, which never exists: a missing parameter is a 404.
	epID, ok := queryEndpointID(w, r, false)
	if !ok {
		return
	}
	if _, ok := s.endpoint(epID); !ok {
		writeError(w, http.StatusNotFound, msgStackEPNotFound, detailNotFound)
		return
	}
	delete(s.stacks, id)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) stackFile(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id", msgBadStackID)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.stacks[id]
	if !ok {
		writeError(w, http.StatusNotFound, msgStackNotFound, detailNotFound)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"StackFileContent": st.file})
}

// queryEndpointID reads endpointId as Portainer's
// request.RetrieveNumericQueryParameter does: missing is a 400 unless
// optional (then 0), and so is anything that is not a number.
func queryEndpointID(w http.ResponseWriter, r *http.Request, required bool) (int, bool) {
	raw := r.URL.Query().Get("endpointId")
	if raw == "" {
		if required {
			writeError(w, http.StatusBadRequest, msgBadEndpointID, "Missing query parameter")
			return 0, false
		}
		return 0, true
	}
	id, err := strconv.Atoi(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, msgBadEndpointID, "Invalid query parameter")
		return 0, false
	}
	return id, true
}

func pathID(w http.ResponseWriter, r *http.Request, name, msg string) (int, bool) {
	id, err := strconv.Atoi(r.PathValue(name))
	if err != nil {
		writeError(w, http.StatusBadRequest, msg, "Invalid route variable")
		return 0, false
	}
	return id, true
}
