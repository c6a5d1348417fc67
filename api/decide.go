package api

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"phonepilot/storage"
)

// A person's decisions on a waiting task: POST /v1/tasks/{id}/approve,
// /deny and /answer. The task service checks that something of that kind
// is pending (409 otherwise) and that exactly one of concurrent decisions
// wins; this file reads the bodies and says who decided.

// maxNoteRunes bounds a decision's note and an answer's text.
const maxNoteRunes = 2000

// approvalHeader carries the approval key (Config.ApprovalKey) of a
// person's decision.
const approvalHeader = "X-Phonepilot-Approval"

// errApprovalKey is a decision without the approval key where one is set.
var errApprovalKey = errors.New("a person decides this: the decision needs the approval key (" + approvalHeader +
	"), which the page takes from the approval link phonepilot printed when it started")

// decisionRequest is the optional body of /approve and /deny.
type decisionRequest struct {
	Note string `json:"note"`
}

// answerRequest is the body of /answer.
type answerRequest struct {
	Text string `json:"text"`
}

// decider is who a request's decision is recorded as coming from, set by
// the server from how it arrived (never from what a client says it is):
// with an approval key set, only a request carrying it decides, as the web
// page ("web"); without one, the bearer token decides, as the API.
func (s *Server) decider(r *http.Request) (string, error) {
	if s.cfg.ApprovalKey == "" {
		return storage.ByAPI, nil
	}
	got := strings.TrimSpace(r.Header.Get(approvalHeader))
	h := sha256.Sum256([]byte(got))
	if got == "" || subtle.ConstantTimeCompare(h[:], s.approvalHash[:]) != 1 {
		return "", errApprovalKey
	}
	return storage.ByWeb, nil
}

// ApprovalLink is the page's address that hands it the approval key: the
// key is in the fragment, which the browser never sends to a server (nor
// to a proxy's log); the page keeps it and sends it with decisions.
func ApprovalLink(base, key string) string {
	return strings.TrimRight(base, "/") + "/#approval=" + key
}

// NewApprovalKey is a fresh random approval key.
func NewApprovalKey() string { return rand.Text() }

// decodeOptionalBody is decodeBody for endpoints whose body may be left out
// (or empty).
func decodeOptionalBody(r *http.Request, w http.ResponseWriter, limit int64, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	return decodeBody(r, w, limit, v)
}

func (s *Server) decisionNote(w http.ResponseWriter, r *http.Request) (string, error) {
	var req decisionRequest
	if err := decodeOptionalBody(r, w, s.cfg.MaxBodyBytes, &req); err != nil {
		return "", err
	}
	note := strings.TrimSpace(req.Note)
	if utf8.RuneCountInString(note) > maxNoteRunes {
		return "", badField("note", "longer than %d characters", maxNoteRunes)
	}
	return note, nil
}

// approveTask runs exactly the pending action and lets the task go on.
func (s *Server) approveTask(w http.ResponseWriter, r *http.Request) error {
	by, err := s.decider(r)
	if err != nil {
		return err
	}
	note, err := s.decisionNote(w, r)
	if err != nil {
		return err
	}
	t, err := s.svc.Approve(r.Context(), r.PathValue("id"), by, note)
	if err != nil {
		return serviceError(err)
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// denyTask refuses the pending action; the planner is told.
func (s *Server) denyTask(w http.ResponseWriter, r *http.Request) error {
	by, err := s.decider(r)
	if err != nil {
		return err
	}
	note, err := s.decisionNote(w, r)
	if err != nil {
		return err
	}
	t, err := s.svc.Deny(r.Context(), r.PathValue("id"), by, note)
	if err != nil {
		return serviceError(err)
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// answerTask answers the planner's pending question.
func (s *Server) answerTask(w http.ResponseWriter, r *http.Request) error {
	by, err := s.decider(r)
	if err != nil {
		return err
	}
	var req answerRequest
	if err := decodeBody(r, w, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	text := strings.TrimSpace(req.Text)
	switch {
	case text == "":
		return badField("text", "required: the answer to the task's question")
	case utf8.RuneCountInString(text) > maxNoteRunes:
		return badField("text", "longer than %d characters", maxNoteRunes)
	}
	t, err := s.svc.Answer(r.Context(), r.PathValue("id"), by, text)
	if err != nil {
		return serviceError(err)
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}
