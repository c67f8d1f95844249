package caseapi

import (
	"net/http"

	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/testrunner/identity"
)

func (a *API) listTrees(w http.ResponseWriter, _ *http.Request, _ identity.Identity) error {
	list, err := a.trees.list()
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, list)
}

// uploadTree stores the multipart field file as a tree: 201 for a new
// name, 200 when it replaced a tree of that name.
func (a *API) uploadTree(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	up, err := readUpload(w, r, "file", a.cfg.MaxUpload, "TREE")
	if err != nil {
		return err
	}
	saved, err := a.trees.save(up.Name, up.Data)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if !saved.Replaced {
		status = http.StatusCreated
	}
	return httpx.WriteJSON(w, status, saved)
}

func (a *API) deleteTree(w http.ResponseWriter, r *http.Request, _ identity.Identity) error {
	name := r.PathValue("filename")
	if err := a.trees.remove(name); err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, map[string]string{"deleted": name})
}
