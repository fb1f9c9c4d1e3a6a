package balance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/volcengine/volcengine-go-sdk/service/billing"
	"github.com/volcengine/volcengine-go-sdk/volcengine"
	"github.com/volcengine/volcengine-go-sdk/volcengine/credentials"
	"github.com/volcengine/volcengine-go-sdk/volcengine/session"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Volcengine billing API facts (volcengine.com/docs/6269/1337079):
// POST /?Action=ListResourcePackages&Version=2022-01-01, at most 20 results
// a page, NextToken paging ("" first; an empty list or token ends it).
const (
	DefaultVolcengineBaseURL = "https://open.volcengineapi.com"
	DefaultVolcengineRegion  = "cn-beijing"
	volcenginePageSize       = "20"
	volcengineMaxPages       = 500 // 10,000 packages: far beyond any account; stops a looping token
	statusEffective          = "Effective"
)

// Volcengine sums the AvailableAmount of a model's effective resource
// packages (seed 002 §3: the balance is the sum over packages). The official
// SDK signs each request; BaseURL points it at a local fake in tests.
type Volcengine struct {
	client       *billing.BILLING
	product      string
	resourceType string
	modelField   string

	mu     sync.Mutex // guards the listing the last Balance read, reused by Expiries
	last   []Package
	lastAt time.Time
}

// listingReuse: Expiries right after Balance (one sync) reuses its listing
// instead of paging the API again (10 queries a second at most).
const listingReuse = 10 * time.Second

// NewVolcengine builds the source; AccessKey and SecretKey are required.
func NewVolcengine(cfg Config, client *http.Client) (*Volcengine, error) {
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, ledger.Errorf(ledger.CodeInvalidRequest, "volcengine balance source needs access_key and secret_key")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultVolcengineBaseURL
	}
	region := cfg.Region
	if region == "" {
		region = DefaultVolcengineRegion
	}
	rt := cfg.ResourceType
	if rt == "" {
		rt = billing.EnumOfResourceTypeForListResourcePackagesInputPackage
	}
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	vc := volcengine.NewConfig().
		WithRegion(region).
		WithCredentials(credentials.NewStaticCredentials(cfg.AccessKey, cfg.SecretKey, "")).
		WithEndpoint(base).
		WithHTTPClient(client).
		WithMaxRetries(1)
	sess, err := session.NewSession(vc)
	if err != nil {
		return nil, fmt.Errorf("volcengine balance source: %w", err)
	}
	return &Volcengine{client: billing.New(sess), product: cfg.Product, resourceType: rt, modelField: cfg.ModelField}, nil
}

// Kind names the source in snapshots.
func (*Volcengine) Kind() string { return KindVolcengine }

// Package is one listed resource package, as the dashboard may show it so
// that a user can see which product and field name their model.
type Package struct {
	InstanceNo        string `json:"instance_no"`
	Product           string `json:"product"`
	ProductName       string `json:"product_name"`
	ConfigurationCode string `json:"configuration_code"`
	ConfigurationName string `json:"configuration_name"`
	InstanceName      string `json:"instance_name"`
	Specification     string `json:"specification"`
	Status            string `json:"status"`
	AvailableAmount   string `json:"available_amount"`
	TotalAmount       string `json:"total_amount"`
	Unit              string `json:"unit"`
	ExpiryTime        string `json:"expiry_time"`
}

// Packages lists every package of the configured type and product, all pages.
func (v *Volcengine) Packages(ctx context.Context) ([]Package, error) {
	var out []Package
	token := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == volcengineMaxPages {
			return nil, fmt.Errorf("list resource packages: more than %d pages", volcengineMaxPages)
		}
		in := &billing.ListResourcePackagesInput{
			ResourceType: volcengine.String(v.resourceType),
			MaxResults:   volcengine.String(volcenginePageSize),
			NextToken:    volcengine.String(token),
		}
		if v.product != "" {
			in.Product = volcengine.String(v.product)
		}
		res, err := v.client.ListResourcePackagesWithContext(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list resource packages (page %d): %w", page+1, err)
		}
		for _, p := range res.List {
			if p != nil {
				out = append(out, packageOf(p))
			}
		}
		next := volcengine.StringValue(res.NextToken)
		if len(res.List) == 0 || next == "" {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("list resource packages: NextToken %q repeated", next)
		}
		seen[next] = true
		token = next
	}
}

func packageOf(p *billing.ListForListResourcePackagesOutput) Package {
	s := volcengine.StringValue
	return Package{InstanceNo: s(p.InstanceNo), Product: s(p.Product), ProductName: s(p.ProductName),
		ConfigurationCode: s(p.ConfigurationCode), ConfigurationName: s(p.ConfigurationName),
		InstanceName: s(p.InstanceName), Specification: s(p.Specification), Status: s(p.Status),
		AvailableAmount: s(p.AvailableAmount), TotalAmount: s(p.TotalAmount), Unit: s(p.Unit),
		ExpiryTime: s(p.ExpiryTime)}
}

// Balance sums AvailableAmount over the model's effective packages.
func (v *Volcengine) Balance(ctx context.Context, model string) (ledger.Units, error) {
	pkgs, err := v.Packages(ctx)
	if err != nil {
		return 0, fmt.Errorf("volcengine balance of %s: %w", model, err)
	}
	v.mu.Lock()
	v.last, v.lastAt = pkgs, time.Now()
	v.mu.Unlock()
	var sum ledger.Units
	for _, p := range pkgs {
		if p.Status != "" && p.Status != statusEffective {
			continue
		}
		if !v.matches(p, model) {
			continue
		}
		u, err := ParseUnits(p.AvailableAmount)
		if err != nil {
			return 0, fmt.Errorf("volcengine balance of %s: package %s AvailableAmount: %w", model, p.InstanceNo, err)
		}
		sum += u
	}
	if err := ledger.CheckUnits("balance", sum); err != nil {
		return 0, fmt.Errorf("volcengine balance of %s: %w", model, err)
	}
	return sum, nil
}

// matches: with ModelField set, that field must equal the model; otherwise
// any of the naming fields must contain it (case-insensitive). The provider's
// page does not say which field names an Ark model, hence the option.
func (v *Volcengine) matches(p Package, model string) bool {
	m := strings.ToLower(model)
	fields := map[string]string{
		"ConfigurationCode": p.ConfigurationCode, "ConfigurationName": p.ConfigurationName,
		"InstanceName": p.InstanceName, "Specification": p.Specification, "ProductName": p.ProductName,
	}
	if v.modelField != "" {
		return strings.EqualFold(fields[v.modelField], model)
	}
	for _, f := range fields {
		if f != "" && strings.Contains(strings.ToLower(f), m) {
			return true
		}
	}
	return false
}

// Expiry is when a package's available units vanish (the quota guard's
// quota.Expiry is the same unnamed struct type).
type Expiry = struct {
	At    time.Time
	Units ledger.Units
}

// expiryLayouts: the page does not fix the format of ExpiryTime.
var expiryLayouts = []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", time.DateOnly}

// providerZone is where a time without an offset is read (the provider is in China).
var providerZone = time.FixedZone("CST", 8*60*60)

// ParseExpiry reads a package's ExpiryTime; "" means no expiry.
func ParseExpiry(s string) (time.Time, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false, nil
	}
	for _, l := range expiryLayouts {
		if t, err := time.ParseInLocation(l, s, providerZone); err == nil {
			return t, true, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("expiry time %q has an unknown format", s)
}

// Expiries lists when the model's effective packages expire, with their
// available units, so that the guard stops counting units about to vanish.
func (v *Volcengine) Expiries(ctx context.Context, model string) ([]Expiry, error) {
	v.mu.Lock()
	pkgs, fresh := v.last, time.Since(v.lastAt) < listingReuse
	v.mu.Unlock()
	if !fresh {
		var err error
		if pkgs, err = v.Packages(ctx); err != nil {
			return nil, fmt.Errorf("volcengine expiries of %s: %w", model, err)
		}
	}
	var out []Expiry
	for _, p := range pkgs {
		if (p.Status != "" && p.Status != statusEffective) || !v.matches(p, model) {
			continue
		}
		at, ok, err := ParseExpiry(p.ExpiryTime)
		if err != nil {
			return nil, fmt.Errorf("volcengine expiries of %s: package %s: %w", model, p.InstanceNo, err)
		}
		if !ok {
			continue
		}
		u, err := ParseUnits(p.AvailableAmount)
		if err != nil {
			return nil, fmt.Errorf("volcengine expiries of %s: package %s AvailableAmount: %w", model, p.InstanceNo, err)
		}
		out = append(out, Expiry{At: at, Units: u})
	}
	return out, nil
}
