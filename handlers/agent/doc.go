// Package agent is the protocol by which a dashboard runs plans on other
// hosts that have no inbound port: an agent (Agent, iolab agent) polls the
// dashboard for work, runs each plan on its own machine and sends back its
// events and steps; the dashboard's side (Hub) queues runs for agents,
// holds each run's lease, relays its events and stores its steps. The
// messages, paths and timing of the protocol are in protocol.go.
package agent
