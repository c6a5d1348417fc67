package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"phonepilot/perception"
	"phonepilot/scene"
)

func init() { register(newSceneCmd) }

// newSceneCmd is `phonepilot scene FILE|-`: what the agent would see on the
// screen a uiautomator dump describes.
func newSceneCmd() *cobra.Command {
	var format string
	var width, height int
	cmd := &cobra.Command{
		Use:   "scene FILE|-",
		Short: "Show what the agent sees on a screen, from a uiautomator dump",
		Long: `Parse a uiautomator dump (uiautomator dump / uiautomator2 dumpWindowHierarchy
XML; "-" reads standard input) and print it as the agent would see it:

  prompt  the Scene listing a model reads (docs/scene-json.md, docs/tools.md)
  json    the Scene's JSON form (docs/scene-json.md)
  stats   nodes, elements kept, prompt bytes and an estimated token count
          (about 4 bytes per token for ASCII, one per non-ASCII rune)

Bad input ends with exit status 2 and a message saying what and where.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "prompt", "json", "stats":
			default:
				return exitWith(2, fmt.Errorf("scene: --format %q: want prompt, json or stats", format))
			}
			if width < 0 || height < 0 {
				return exitWith(2, fmt.Errorf("scene: --width/--height must not be negative"))
			}
			name := args[0]
			data, err := readInput(cmd.InOrStdin(), name)
			if err != nil {
				return exitWith(2, fmt.Errorf("scene: %w", err))
			}
			if name == "-" {
				name = "standard input"
			}
			sc, err := perception.Parse(data, perception.Options{Width: width, Height: height})
			if err != nil {
				var pe *perception.ParseError
				switch {
				case errors.As(err, &pe):
					return exitWith(2, fmt.Errorf("scene: %s is not a usable uiautomator dump: at byte %d: %s", name, pe.Offset, pe.Msg))
				case perception.Retryable(err):
					return exitWith(2, fmt.Errorf("scene: %s holds a device error instead of a dump (%w); dump again", name, err))
				}
				return exitWith(2, fmt.Errorf("scene: %s: %w", name, err))
			}
			out := cmd.OutOrStdout()
			switch format {
			case "prompt":
				_, err = io.WriteString(out, sc.Listing())
			case "json":
				var js []byte
				if js, err = sc.MarshalJSON(); err == nil {
					_, err = out.Write(append(js, '\n'))
				}
			case "stats":
				err = writeStats(out, name, data, sc)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", "prompt", "output: prompt, json or stats")
	cmd.Flags().IntVar(&width, "width", 0, "screen width in pixels (default: from the dump)")
	cmd.Flags().IntVar(&height, "height", 0, "screen height in pixels (default: from the dump)")
	return cmd
}

func readInput(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

func writeStats(w io.Writer, name string, data []byte, sc *scene.Scene) error {
	prompt := sc.Listing()
	windows := 0
	for _, e := range sc.Elements {
		if e.Parent < 0 {
			windows++
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "input\t%s\n", name)
	fmt.Fprintf(tw, "dump bytes\t%d\n", len(data))
	fmt.Fprintf(tw, "screen\t%dx%d rotation %d\n", sc.Width, sc.Height, sc.Rotation)
	fmt.Fprintf(tw, "app\t%s\n", sc.Package)
	fmt.Fprintf(tw, "windows\t%d\n", windows)
	fmt.Fprintf(tw, "nodes\t%d\n", len(sc.Elements))
	fmt.Fprintf(tw, "elements kept\t%d\n", len(sc.Listed()))
	fmt.Fprintf(tw, "prompt bytes\t%d (%.1f%% of the dump)\n", len(prompt), 100*float64(len(prompt))/float64(max(len(data), 1)))
	fmt.Fprintf(tw, "tokens (est.)\t%d (~4 ASCII bytes/token, 1 per non-ASCII rune)\n", scene.EstimateTokens(prompt))
	return tw.Flush()
}
