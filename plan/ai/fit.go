package ai

// FitPNG is the downscaling the planner applies to its screenshots, for
// other senders of a screenshot to a model (the MCP server's observe): the
// PNG unchanged when its long edge is at most maxEdge and its area at most
// maxPixels, else a CatmullRom-downscaled PNG that fits both.
func FitPNG(data []byte, maxEdge, maxPixels int) (*Image, error) {
	return fitImage(data, maxEdge, maxPixels)
}
