package handlers

import "github.com/labstack/echo/v4"

// contentSecurityPolicy lets a page load only this server's own scripts,
// styles, images and data, and be framed by no one: a name or label that
// slipped past escaping could run no script (no inline script is
// allowed: the templates have none, every script is a file under
// /static), load nothing from elsewhere, and post no form elsewhere.
// Style attributes alone are allowed (style-src-attr): echarts' tooltips
// are HTML with a style attribute per coloured dot, and a style attribute
// can load nothing that img-src and font-src do not allow. data: and blob:
// images are the charts' PNG and SVG downloads.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

// securityHeaders sets, on every answer (pages, the API, static files,
// errors), that no other site may frame it (X-Frame-Options for older
// browsers, frame-ancestors for newer), the content policy, and that a
// file is what its Content-Type says (an import's name cannot make a CSV
// a page).
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}
