package handlers

import (
	"cmp"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"iolab/db"

	"github.com/labstack/echo/v4"
)

// The runs list, `/`, `/runs` and GET /api/runs: a page of runs through
// db.RunPage, its parameters (db.RunParams) in the URL so that a filtered,
// sorted page can be shared.

// runQuery reads the list's parameters from the query string; label= is
// tag='s other name (the page calls tags labels).
func runQuery(q url.Values) (db.RunQuery, error) {
	rq, err := db.ParseRunQuery(func(name string) string {
		if name == "tag" {
			return cmp.Or(q.Get("tag"), q.Get("label"))
		}
		return q.Get(name)
	})
	var pe *db.ParamError
	if errors.As(err, &pe) {
		return rq, &ValidationError{Field: pe.Param, Msg: pe.Error()}
	}
	return rq, err
}

// listValues are rq's parameters as a query string, without the page's
// cursor: the filter and the sort.
func listValues(rq db.RunQuery) url.Values {
	v := url.Values{}
	for _, p := range []struct{ name, value string }{
		{"host", rq.Hostname}, {"kernel", rq.Kernel}, {"target", rq.Target}, {"engine", rq.Engine},
		{"scheduler", rq.Scheduler}, {"tag", rq.Tag}, {"workload", rq.Workload}, {"status", rq.Status},
		{"source", rq.Source}, {"name", rq.Name}, {"sort", string(rq.Sort)},
	} {
		if p.value != "" {
			v.Set(p.name, p.value)
		}
	}
	// Local, as since= and until= read a time without a zone; to the
	// nanosecond, so that the next page's filter is this one's.
	const stamp = "2006-01-02T15:04:05.999999999"
	if !rq.Since.IsZero() {
		v.Set("since", rq.Since.In(time.Local).Format(stamp))
	}
	if !rq.Until.IsZero() {
		v.Set("until", rq.Until.In(time.Local).Format(stamp))
	}
	if rq.Limit != 0 {
		v.Set("limit", strconv.Itoa(rq.Limit))
	}
	return v
}

// pageURL is path with v and one more parameter (none when name is "").
func pageURL(path string, v url.Values, name, value string) string {
	if name != "" {
		v = cloneValues(v)
		v.Set(name, value)
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, l := range v {
		c[k] = append([]string(nil), l...)
	}
	return c
}

// runsPageData is the runs list.
type runsPageData struct {
	pageBase
	Query    db.RunQuery
	Filtered bool // a filter is set: "no runs match" rather than "no runs yet"
	Since    string
	Until    string
	Page     *db.RunPage
	Last     int // the position of the page's last run
	Columns  []runsColumn
	Rows     []runsRow
	Choices  *db.RunChoices
	Statuses []string
	Sources  []string
	// First, Prev and Next are the links to the first page and to those
	// around this one; "" when there is none.
	First, Prev, Next string
	Sort              string // the sort, for the filter form to keep
}

// runsRow is a run of the list as the page writes it: its cells worked
// out here, so that the template's loop over a page's hundreds of cells
// tests flags rather than calling back into Go for each.
type runsRow struct {
	ID    int64
	Cells []runsCell
}

// runsCell is one cell: its text, a link to the run or a status badge,
// and the run's tags after its name.
type runsCell struct {
	Text              string
	Link, Status, Num bool
	Tags              []string
}

// runsColumn is a column of the list with its header's sort link.
type runsColumn struct {
	db.RunColumn
	SortURL string // "" for a column the list does not sort on
	Sorted  string // "▲" or "▼" on the column sorted on
}

func (s *Server) runsPage(c echo.Context) error {
	ctx := c.Request().Context()
	rq, err := runQuery(c.QueryParams())
	if err != nil {
		return err
	}
	page, err := s.store.RunPage(ctx, rq)
	if err != nil {
		return err
	}
	choices, err := s.store.RunChoices(ctx)
	if err != nil {
		return err
	}
	v := listValues(rq)
	d := runsPageData{pageBase: s.base(c, "Runs"), Query: rq, Page: page, Choices: choices,
		Statuses: db.Statuses(), Sources: db.Sources(), Sort: string(rq.Sort)}
	d.Filtered = rq.RunFilter != db.RunFilter{Limit: rq.Limit}
	if !rq.Since.IsZero() {
		d.Since = rq.Since.In(time.Local).Format("2006-01-02T15:04")
	}
	if !rq.Until.IsZero() {
		d.Until = rq.Until.In(time.Local).Format("2006-01-02T15:04")
	}
	if len(page.Runs) > 0 {
		d.Last = page.First + len(page.Runs) - 1
	}
	if page.First > 1 || (len(page.Runs) == 0 && page.Total > 0) {
		d.First = pageURL("/runs", v, "", "")
	}
	if page.Prev != "" {
		d.Prev = pageURL("/runs", v, "before", page.Prev)
	}
	if page.Next != "" {
		d.Next = pageURL("/runs", v, "after", page.Next)
	}
	curName, curDesc := rq.Sort.Key()
	for _, col := range db.RunColumns() {
		rc := runsColumn{RunColumn: col}
		if col.Sort != "" {
			// A header sorts on its column; on the column sorted on, the
			// other way.
			want := db.RunSort(col.Sort)
			if col.Sort == curName {
				rc.Sorted = map[bool]string{false: "▲", true: "▼"}[curDesc]
				want = rq.Sort.Reverse()
			}
			sv := cloneValues(v)
			sv.Del("sort")
			if want != "" && want != "date" {
				sv.Set("sort", string(want))
			}
			rc.SortURL = pageURL("/runs", sv, "", "")
		}
		d.Columns = append(d.Columns, rc)
	}
	for _, r := range page.Runs {
		row := runsRow{ID: r.ID}
		for _, col := range d.Columns {
			cell := runsCell{Text: col.Value(r)}
			switch col.Name {
			case "#":
				cell.Link = true
			case "name":
				cell.Link, cell.Tags = true, r.Tags
			case "status":
				cell.Status = true
			case "steps":
				cell.Num = true
			}
			row.Cells = append(row.Cells, cell)
		}
		d.Rows = append(d.Rows, row)
	}
	return s.render(c, http.StatusOK, "runs", &d)
}

// runsAnswer is GET /api/runs: a page of runs, with the URLs of the pages
// around it.
type runsAnswer struct {
	Runs  []db.ListedRun `json:"runs"`
	Total int            `json:"total"` // runs the filter keeps
	First int            `json:"first"` // the first run's position among them, from 1; 0 for none
	Next  string         `json:"next,omitempty"`
	Prev  string         `json:"prev,omitempty"`
}

func (s *Server) apiListRuns(c echo.Context) error {
	rq, err := runQuery(c.QueryParams())
	if err != nil {
		return err
	}
	page, err := s.store.RunPage(c.Request().Context(), rq)
	if err != nil {
		return err
	}
	v := listValues(rq)
	a := runsAnswer{Runs: page.Runs, Total: page.Total, First: page.First}
	if page.Next != "" {
		a.Next = pageURL("/api/runs", v, "after", page.Next)
	}
	if page.Prev != "" {
		a.Prev = pageURL("/api/runs", v, "before", page.Prev)
	}
	return c.JSON(http.StatusOK, a)
}
