package browsertools

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"unicode/utf8"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"cpesuite/internal/platform/apperr"
)

// Tool names, as clients call them.
const (
	ToolNavigate    = "navigate"
	ToolClick       = "click"
	ToolType        = "type"
	ToolReadText    = "read_text"
	ToolScreenshot  = "screenshot"
	ToolCurrentPage = "current_page"
)

type navigateInput struct {
	URL string `json:"url" jsonschema:"absolute http:// or https:// URL to open in this session's tab; other schemes are refused"`
}

type navigateOutput struct {
	URL    string `json:"url" jsonschema:"URL of the page after redirects"`
	Title  string `json:"title" jsonschema:"document title"`
	Status int    `json:"status" jsonschema:"HTTP status of the document; 0 when the browser reported none"`
}

type selectorInput struct {
	Selector string `json:"selector" jsonschema:"CSS selector of the element; the call waits until it is visible"`
}

type clickOutput struct {
	Clicked string `json:"clicked" jsonschema:"the selector of the clicked element"`
}

type typeInput struct {
	Selector string `json:"selector" jsonschema:"CSS selector of the input, textarea or editable element; the call waits until it is visible"`
	Text     string `json:"text" jsonschema:"text to type, as key presses; a newline presses Enter"`
	Clear    bool   `json:"clear,omitempty" jsonschema:"empty the field before typing (default false: append)"`
}

type typeOutput struct {
	Selector string `json:"selector" jsonschema:"the selector typed into"`
	Typed    int    `json:"typed" jsonschema:"number of characters typed"`
}

type readTextInput struct {
	Selector string `json:"selector,omitempty" jsonschema:"CSS selector of the element whose visible text to read; default body"`
}

type readTextOutput struct {
	Selector  string `json:"selector" jsonschema:"the selector read"`
	Text      string `json:"text" jsonschema:"visible text of the element, at most 64 KiB"`
	Truncated bool   `json:"truncated" jsonschema:"true when the text was cut to 64 KiB"`
	Bytes     int    `json:"bytes" jsonschema:"length of the whole text in bytes"`
}

type screenshotInput struct {
	Selector string `json:"selector,omitempty" jsonschema:"CSS selector of the element to capture; default the full page"`
}

type currentPageInput struct{}

type pageOutput struct {
	URL   string `json:"url" jsonschema:"URL of the page in this session's tab"`
	Title string `json:"title" jsonschema:"document title"`
}

func (s *Server) registerTools() {
	yes := true
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolNavigate,
		Description: "Open an http or https URL in this session's browser tab and wait for it to load. Returns the final URL, the title and the HTTP status.",
		Annotations: &mcp.ToolAnnotations{Title: "Navigate", OpenWorldHint: &yes},
	}, s.navigate)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolClick,
		Description: "Click the element a CSS selector matches (the first one), waiting until it is visible.",
		Annotations: &mcp.ToolAnnotations{Title: "Click"},
	}, s.click)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolType,
		Description: "Type text into the element a CSS selector matches, as key presses, optionally clearing it first. File inputs are refused.",
		Annotations: &mcp.ToolAnnotations{Title: "Type text"},
	}, s.typeText)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolReadText,
		Description: "Read the visible text of the element a CSS selector matches (default: the whole body). The text is cut at 64 KiB; the result says so.",
		Annotations: &mcp.ToolAnnotations{Title: "Read text", ReadOnlyHint: true, IdempotentHint: true},
	}, s.readText)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolScreenshot,
		Description: "Take a PNG screenshot of the element a CSS selector matches, or of the full page when no selector is given.",
		Annotations: &mcp.ToolAnnotations{Title: "Screenshot", ReadOnlyHint: true, IdempotentHint: true},
	}, s.screenshot)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolCurrentPage,
		Description: "Return the URL and title of the page open in this session's tab (about:blank before the first navigate).",
		Annotations: &mcp.ToolAnnotations{Title: "Current page", ReadOnlyHint: true, IdempotentHint: true},
	}, s.currentPage)
}

func (s *Server) navigate(ctx context.Context, req *mcp.CallToolRequest, in navigateInput) (*mcp.CallToolResult, navigateOutput, error) {
	c := call{tool: ToolNavigate}
	target, err := checkURL(in.URL)
	if err != nil {
		return nil, navigateOutput{}, s.toolErr(c, err)
	}
	var out navigateOutput
	err = s.withTab(ctx, req.Session, func(actx context.Context) error {
		resp, err := chromedp.Run(actx, chromedp.NavigateResponse(target))
		if err != nil {
			return err
		}
		if resp != nil {
			out.Status = int(resp.Status)
		}
		out.URL, out.Title, err = pageInfo(actx)
		return err
	})
	if err != nil {
		return nil, navigateOutput{}, s.toolErr(c, err)
	}
	return nil, out, nil
}

func (s *Server) click(ctx context.Context, req *mcp.CallToolRequest, in selectorInput) (*mcp.CallToolResult, clickOutput, error) {
	c := call{tool: ToolClick, selector: in.Selector}
	if err := checkSelector(in.Selector, true); err != nil {
		return nil, clickOutput{}, s.toolErr(c, err)
	}
	err := s.withTab(ctx, req.Session, func(actx context.Context) error {
		return chromedp.Do(actx, chromedp.Click(chromedp.CSS(in.Selector)))
	})
	if err != nil {
		return nil, clickOutput{}, s.toolErr(c, err)
	}
	return nil, clickOutput{Clicked: in.Selector}, nil
}

func (s *Server) typeText(ctx context.Context, req *mcp.CallToolRequest, in typeInput) (*mcp.CallToolResult, typeOutput, error) {
	c := call{tool: ToolType, selector: in.Selector}
	if err := checkSelector(in.Selector, true); err != nil {
		return nil, typeOutput{}, s.toolErr(c, err)
	}
	n := utf8.RuneCountInString(in.Text)
	if n > maxTypeRunes {
		return nil, typeOutput{}, s.toolErr(c, apperr.Invalid("TEXT_TOO_LONG", "text has %d characters; at most %d can be typed in one call", n, maxTypeRunes))
	}
	if !utf8.ValidString(in.Text) {
		return nil, typeOutput{}, s.toolErr(c, apperr.Invalid("INVALID_TEXT", "text must be valid UTF-8"))
	}
	err := s.withTab(ctx, req.Session, func(actx context.Context) error {
		_, err := chromedp.Run(actx, chromedp.QueryAfter(chromedp.CSS(in.Selector),
			func(ctx context.Context, t *chromedp.Target, nodes []*chromedp.Node) (chromedp.Void, error) {
				node := nodes[0]
				// chromedp turns typing into an <input type=file> into an
				// upload of a local path: a case must not read the stand's files.
				if node.NodeName == "INPUT" && node.AttributeValue("type") == "file" {
					return chromedp.Void{}, apperr.Invalid("FILE_INPUT_REFUSED", "element %q is a file input; uploading files is not supported", in.Selector)
				}
				if in.Clear {
					if err := clearNode(ctx, t, node, in.Selector); err != nil {
						return chromedp.Void{}, err
					}
				}
				return chromedp.KeyEventNode(node, in.Text)(ctx, t)
			}, chromedp.NodeVisible))
		return err
	})
	if err != nil {
		return nil, typeOutput{}, s.toolErr(c, err)
	}
	return nil, typeOutput{Selector: in.Selector, Typed: n}, nil
}

func (s *Server) readText(ctx context.Context, req *mcp.CallToolRequest, in readTextInput) (*mcp.CallToolResult, readTextOutput, error) {
	sel := in.Selector
	if sel == "" {
		sel = "body"
	}
	c := call{tool: ToolReadText, selector: sel}
	if err := checkSelector(sel, true); err != nil {
		return nil, readTextOutput{}, s.toolErr(c, err)
	}
	var text string
	err := s.withTab(ctx, req.Session, func(actx context.Context) error {
		var err error
		text, err = chromedp.Run(actx, chromedp.Text(chromedp.CSS(sel)))
		return err
	})
	if err != nil {
		return nil, readTextOutput{}, s.toolErr(c, err)
	}
	cut, truncated := truncateText(text, maxTextBytes)
	out := readTextOutput{Selector: sel, Text: cut, Truncated: truncated, Bytes: len(text)}
	shown := cut
	if truncated {
		shown += fmt.Sprintf("\n[truncated: showing the first %d of %d bytes]", len(cut), len(text))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: shown}}}, out, nil
}

func (s *Server) screenshot(ctx context.Context, req *mcp.CallToolRequest, in screenshotInput) (*mcp.CallToolResult, any, error) {
	c := call{tool: ToolScreenshot, selector: in.Selector}
	if err := checkSelector(in.Selector, false); err != nil {
		return nil, nil, s.toolErr(c, err)
	}
	var img []byte
	var url string
	err := s.withTab(ctx, req.Session, func(actx context.Context) error {
		var err error
		if in.Selector == "" {
			img, err = chromedp.Run(actx, chromedp.FullScreenshot(100)) // 100: PNG
		} else {
			img, err = chromedp.Run(actx, chromedp.Screenshot(chromedp.CSS(in.Selector)))
		}
		if err != nil {
			return err
		}
		url, err = chromedp.Run(actx, chromedp.Location())
		return err
	})
	if err != nil {
		return nil, nil, s.toolErr(c, err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, nil, s.toolErr(c, fmt.Errorf("the browser returned an image that is not a PNG: %w", err))
	}
	what := "full page"
	if in.Selector != "" {
		what = fmt.Sprintf("element %q", in.Selector)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{Data: img, MIMEType: "image/png"},
		&mcp.TextContent{Text: fmt.Sprintf("PNG screenshot of the %s of %s, %dx%d pixels", what, url, cfg.Width, cfg.Height)},
	}}, nil, nil
}

func (s *Server) currentPage(ctx context.Context, req *mcp.CallToolRequest, _ currentPageInput) (*mcp.CallToolResult, pageOutput, error) {
	c := call{tool: ToolCurrentPage}
	var out pageOutput
	err := s.withTab(ctx, req.Session, func(actx context.Context) error {
		var err error
		out.URL, out.Title, err = pageInfo(actx)
		return err
	})
	if err != nil {
		return nil, pageOutput{}, s.toolErr(c, err)
	}
	return nil, out, nil
}

// pageInfo reads the URL and title of the tab's document.
func pageInfo(ctx context.Context) (url, title string, err error) {
	if url, err = chromedp.Run(ctx, chromedp.Location()); err != nil {
		return "", "", err
	}
	title, err = chromedp.Run(ctx, chromedp.Title())
	return url, title, err
}
