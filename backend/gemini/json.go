package gemini

import "github.com/quotagate/quotagate/backend/wire"

var invalid = wire.Invalidf
