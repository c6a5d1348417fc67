package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"phonepilot/storage"
	"phonepilot/task"
)

// FieldError is bad input; Field names what was wrong (a JSON body field or
// a query parameter).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func badField(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Errors that map to a status of their own.
var (
	errUnauthorized = errors.New("a valid bearer token is required (Authorization: Bearer <token>)")
	errNoRoute      = errors.New("no such endpoint")
	errConflict     = errors.New("conflict")
	errUncleanPath  = errors.New(`path has "." or ".." segments or "//"; send the clean path`)
)

// methodError is a request with a method the path does not take.
type methodError struct{ allow string }

func (e *methodError) Error() string { return "method not allowed; use " + e.allow }

// errorBody is the one shape every error response has.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// classify is the one table from errors to HTTP status and code.
func classify(err error) (status int, code string) {
	var (
		fe *FieldError
		me *methodError
		ce *storage.ConflictError
		mb *http.MaxBytesError
	)
	switch {
	case errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge, "too_large"
	case errors.As(err, &fe), errors.Is(err, errUncleanPath):
		return http.StatusBadRequest, "bad_request"
	case errors.Is(err, errUnauthorized):
		return http.StatusUnauthorized, "unauthorized"
	case errors.Is(err, errWrongHost):
		return http.StatusMisdirectedRequest, "wrong_host"
	case errors.Is(err, errApprovalKey):
		return http.StatusForbidden, "approval_key_required"
	case errors.Is(err, errCrossOrigin):
		return http.StatusForbidden, "cross_origin"
	case errors.Is(err, errNotJSON):
		return http.StatusUnsupportedMediaType, "not_json"
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, errNoRoute), errors.Is(err, ErrUnknownDevice):
		return http.StatusNotFound, "not_found"
	case errors.As(err, &me):
		return http.StatusMethodNotAllowed, "method_not_allowed"
	case errors.As(err, &ce), errors.Is(err, errConflict), errors.Is(err, task.ErrConflict), errors.Is(err, ErrNoState):
		return http.StatusConflict, "conflict"
	}
	return http.StatusInternalServerError, "internal"
}

// writeError answers with err in the common shape. Internal errors are
// logged and answered without their details.
func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, err error) {
	status, code := classify(err)
	d := errorDetail{Code: code, Message: err.Error()}
	var fe *FieldError
	if errors.As(err, &fe) {
		d.Field = fe.Field
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		d.Message = fmt.Sprintf("request body larger than %d bytes", mb.Limit)
	}
	var me *methodError
	if errors.As(err, &me) {
		w.Header().Set("Allow", me.allow)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="phonepilot"`)
	}
	if status == http.StatusInternalServerError {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		d.Message = "internal error"
	}
	writeJSON(w, status, errorBody{Error: d})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
