package price

//go:generate go run ./internal/gen -src $MODELS_DEV
