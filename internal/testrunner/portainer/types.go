package portainer

// EnvVar is one stack environment variable, Portainer's "Pair".
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Endpoint is a Portainer environment (called endpoint in the API).
type Endpoint struct {
	ID     int    `json:"Id"`
	Name   string `json:"Name"`
	Type   int    `json:"Type"`   // 1 Docker, 2 agent, 4 edge agent, ...
	URL    string `json:"URL"`    // Docker host, e.g. unix:///var/run/docker.sock
	Status int    `json:"Status"` // 1 up, 2 down
}

// Stack types and statuses as Portainer numbers them.
const (
	StackTypeSwarm   = 1
	StackTypeCompose = 2

	StackStatusActive   = 1
	StackStatusInactive = 2
)

// Stack is the part of a Portainer stack the test runner uses.
type Stack struct {
	ID         int      `json:"Id"`
	Name       string   `json:"Name"`
	Type       int      `json:"Type"`
	EndpointID int      `json:"EndpointId"`
	Status     int      `json:"Status"`
	Env        []EnvVar `json:"Env"`
}
