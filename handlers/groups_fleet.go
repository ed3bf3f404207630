package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"iolab/bench/summary"
	"iolab/handlers/chart"
	"iolab/handlers/report"

	"github.com/labstack/echo/v4"
)

// groupFleet is a group's page's fleet: the table, the chart of the step
// fleet_step picks (the first with IOPS over time when it picks none) and
// the links to its CSV and JSON.
type groupFleet struct {
	*report.FleetView
	Chart     []chartView
	CSV, JSON string
}

// groupPageRuns reads a group's runs ids once for its page: each run's
// row and host once, its steps as the compare page reads them (runs) and
// its summaries (sums, the fleet's: the compare page's load keeps no
// samples).
func (s *Server) groupPageRuns(ctx context.Context, ids []int64) (runs, sums []chart.LoadedRun, err error) {
	load := compareLoad()
	runs, err = s.readRuns(ctx, ids, func(id int64, cr *chart.LoadedRun) error {
		steps, err := s.store.StepsFor(ctx, id, load)
		if err != nil {
			return err
		}
		sum, err := s.store.Summaries(ctx, id)
		if err != nil {
			return err
		}
		cr.Steps = steps
		sums = append(sums, chart.LoadedRun{Run: cr.Run, Summary: sum})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range sums {
		sums[i].Host = runs[i].Host
	}
	return runs, sums, nil
}

// fleetOnPage works out the fleet of a group's runs for its page, from
// their summaries (groupPageRuns).
func (s *Server) fleetOnPage(c echo.Context, uid string, runs []chart.LoadedRun) (*groupFleet, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	f := report.FleetOf(runs)
	if len(f.Steps) == 0 {
		return nil, nil
	}
	g := &groupFleet{FleetView: report.FleetViewOf(f), CSV: groupURL(uid) + "/fleet.csv", JSON: "/api/groups/" + uid + "/fleet"}
	seq := 0
	if v := strings.TrimSpace(c.QueryParam("fleet_step")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, &ValidationError{Field: "fleet_step", Msg: "fleet_step: a step's number, from 1"}
		}
		seq = n
	}
	if seq == 0 {
		for _, st := range f.Steps {
			if len(st.Jobs) > 0 && len(st.Jobs[0].Time.Series) > 0 {
				seq = st.Seq
				break
			}
		}
	}
	if seq == 0 {
		return g, nil // no step has IOPS over time: the table alone
	}
	ch, err := chart.FleetTimeline(f, seq, 0, runs)
	if err != nil {
		return nil, err
	}
	if p := chart.FleetStepPicker(f, seq); len(p.Options) > 1 {
		ch.Pickers = []chart.Picker{p}
	}
	v := keepState(withChart(chartView{Kind: string(chart.Fleet), CSV: g.CSV}, ch), c.QueryParams())
	g.Chart = []chartView{v}
	return g, nil
}

// groupRuns reads a group's runs with their summaries.
func (s *Server) groupRuns(ctx context.Context, uid string) (*groupView, []chart.LoadedRun, error) {
	v, err := s.loadGroup(ctx, uid)
	if err != nil {
		return nil, nil, err
	}
	var ids []int64
	for _, m := range v.Members {
		ids = append(ids, m.RunID)
	}
	if len(ids) == 0 {
		return v, nil, nil
	}
	runs, err := s.loadSummaries(ctx, ids)
	return v, runs, err
}

// groupFleetJSON is GET /api/groups/UID/fleet: the group as one system.
type groupFleetJSON struct {
	UID   string             `json:"uid"`
	Name  string             `json:"name"`
	Hosts []string           `json:"hosts"`
	Fleet *summary.FleetJSON `json:"fleet"`
}

func (s *Server) apiGroupFleet(c echo.Context) error {
	v, runs, err := s.groupRuns(c.Request().Context(), c.Param("uid"))
	if err != nil {
		return err
	}
	f := report.FleetOf(runs)
	return c.JSON(http.StatusOK, groupFleetJSON{UID: v.UID, Name: v.Name, Hosts: append([]string{}, f.Hosts...), Fleet: f.JSON()})
}

// groupFleetCSV is the fleet table as CSV (summary.FleetColumns).
func (s *Server) groupFleetCSV(c echo.Context) error {
	v, runs, err := s.groupRuns(c.Request().Context(), c.Param("uid"))
	if err != nil {
		return err
	}
	f := report.FleetOf(runs)
	startCSV(c, fmt.Sprintf("iolab-group-%s-fleet.csv", v.UID[:min(8, len(v.UID))]))
	cw := chart.NewCSVWriter(c.Response(), summary.FleetColumns())
	err = cw.Header()
	for i := 0; err == nil && i < len(f.Steps); i++ {
		for _, row := range f.Steps[i].TableRows() {
			if err = cw.Row(row); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = cw.Flush()
	}
	if err != nil {
		markNotWhole(c)
		s.log.Warn("fleet csv cut short", "group", v.UID, "err", err)
	}
	return nil
}
