package openai

// ModelJSON is one entry of GET /v1/models.
type ModelJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelListJSON is the answer of GET /v1/models.
type ModelListJSON struct {
	Object string      `json:"object"` // "list"
	Data   []ModelJSON `json:"data"`
}
