package browsertools

import (
	"context"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"cpesuite/internal/platform/apperr"
)

// clearJS empties a form field or an editable element and tells the page, as
// a user's edit would. It takes no arguments: chromedp v0.22.1 drops an
// empty-string argument, so SetJavascriptAttribute(sel, "value", "") sets
// "undefined" instead.
const clearJS = `function() {
	if ('value' in this && typeof this.value === 'string') {
		this.value = '';
	} else if (this.isContentEditable) {
		this.textContent = '';
	} else {
		return false;
	}
	this.dispatchEvent(new Event('input', {bubbles: true}));
	this.dispatchEvent(new Event('change', {bubbles: true}));
	return true;
}`

// clearNode empties the field node; selector is for the error message.
func clearNode(ctx context.Context, t *chromedp.Target, node *chromedp.Node, selector string) error {
	r, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{NodeID: node.NodeID})
	if err != nil {
		return err
	}
	defer func() {
		// Fails only when the page went away, and then there is nothing to free.
		_, _ = cdp.Call(ctx, t, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: r.Object.ObjectID})
	}()
	cleared, err := chromedp.CallFunctionOn[bool](clearJS, func(p *runtime.CallFunctionOnParams) {
		p.ObjectID = r.Object.ObjectID
	})(ctx, t)
	if err != nil {
		return err
	}
	if !cleared {
		return apperr.Invalid("NOT_EDITABLE", "element %q is not a form field or editable element, so it cannot be cleared", selector)
	}
	return nil
}
