// Command winres writes the Windows resource object (icon, version
// information, manifest) that `go build` links into quotagate.exe when it
// lies in the main package's folder as rsrc_windows_amd64.syso. The package
// script runs it before cross-building; the .syso is build output.
//
//	go run ./build/windows/winres -version 1.2.3+4.gabc1234 -icon build/appicon.png -out rsrc_windows_amd64.syso
package main

import (
	"flag"
	"fmt"
	"image"
	_ "image/png"
	"os"
	"regexp"
	"strconv"

	"github.com/tc-hib/winres"
	"github.com/tc-hib/winres/version"
)

func main() {
	ver := flag.String("version", "", "quotagate's version string (scripts/version.sh)")
	iconPath := flag.String("icon", "build/appicon.png", "the application icon, a PNG")
	out := flag.String("out", "rsrc_windows_amd64.syso", "the object file to write")
	flag.Parse()
	if err := write(*ver, *iconPath, *out); err != nil {
		fmt.Fprintln(os.Stderr, "winres:", err)
		os.Exit(1)
	}
}

func write(ver, iconPath, out string) error {
	if ver == "" {
		return fmt.Errorf("-version is required")
	}
	f, err := os.Open(iconPath)
	if err != nil {
		return err
	}
	img, _, err := image.Decode(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("decode %s: %w", iconPath, err)
	}
	icon, err := winres.NewIconFromResizedImage(img, nil)
	if err != nil {
		return fmt.Errorf("icon: %w", err)
	}
	rs := winres.ResourceSet{}
	rs.SetIcon(winres.Name("APPICON"), icon)

	numeric := numericVersion(ver)
	vi := version.Info{FileVersion: numeric, ProductVersion: numeric}
	for key, value := range map[string]string{
		version.ProductName:      "quotagate",
		version.FileDescription:  "quotagate — local LLM gateway with a durable ledger",
		version.CompanyName:      "quotagate",
		version.OriginalFilename: "quotagate.exe",
		version.InternalName:     "quotagate",
		version.ProductVersion:   ver,
		version.FileVersion:      ver,
		version.LegalCopyright:   "quotagate authors",
	} {
		if err := vi.Set(version.LangDefault, key, value); err != nil {
			return fmt.Errorf("version info %s: %w", key, err)
		}
	}
	rs.SetVersionInfo(vi)
	rs.SetManifest(winres.AppManifest{
		Identity:            winres.AssemblyIdentity{Name: "quotagate"},
		Description:         "quotagate",
		DPIAwareness:        winres.DPIPerMonitorV2,
		UseCommonControlsV6: true,
	})

	o, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := rs.WriteObject(o, winres.ArchAMD64); err != nil {
		o.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	return o.Close()
}

var leadingNumbers = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(?:\+(\d+))?`)

// numericVersion maps "1.2.3+4.gabc1234" to {1,2,3,4}: Windows' numeric version
// is four 16-bit parts; the full string stays in the string table.
func numericVersion(v string) [4]uint16 {
	var n [4]uint16
	m := leadingNumbers.FindStringSubmatch(v)
	for i := 1; m != nil && i < len(m); i++ {
		if x, err := strconv.ParseUint(m[i], 10, 16); err == nil {
			n[i-1] = uint16(x)
		}
	}
	return n
}
