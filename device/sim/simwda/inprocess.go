package simwda

import (
	"net/http"
	"net/http/httptest"
)

// InProcessURL is the base URL an in-process client uses: any host does,
// the transport never dials.
const InProcessURL = "http://sim.wda.invalid"

// InProcessClient is an HTTP client whose requests are served by h in the
// calling goroutine, without a socket: `--device sim:ios` and phonebench
// drive the simulated iPhone through the same WDA client as a real one,
// on the simulator's clock.
func InProcessClient(h http.Handler) *http.Client {
	return &http.Client{Transport: inProcess{h}}
}

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
