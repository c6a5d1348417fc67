package tasks

import (
	"phonepilot/device/sim"
)

const taobaoPkg = "com.taobao.taobao"

// Queries a person types in either locale (brand names, as Chinese shoppers
// type them too).
var queries = []string{"Mac mini", "iPhone 16", "Kindle", "AirPods", "Switch", "iPad"}

// firstResult is the title of the first (non-sponsored) result for query on
// a phone in locale.
func firstResult(locale, query string) string {
	if ts := sim.ResultTitles(locale, query); len(ts) > 0 {
		return ts[0]
	}
	return ""
}

// taobaoOpen is the start of every Taobao script: launch, then close the
// launch promotion if it shows.
func taobaoOpen(loc string) []Step {
	return []Step{
		launch(tr(loc, "Taobao", "淘宝")),
		tapIfShown("close the promotion", tr(loc, "Close", "关闭")),
	}
}

// taobaoSearch runs a search from Taobao's home.
func taobaoSearch(loc, q string) []Step {
	return append(taobaoOpen(loc),
		tap("open the search page", tr(loc, "Search", "搜索")),
		typeInto("type the query and search", tr(loc, "Search products", "搜索宝贝"), q, true),
	)
}

func init() {
	register(
		Task{
			Name: "taobao.cart.add", Apps: []string{taobaoPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Search Taobao for {query} and add the first result to the cart",
				"zh": "在淘宝搜索{query}，把第一个商品加入购物车",
			},
			Params: func(seed int64) map[string]string { return map[string]string{"query": pick(queries, seed, 2)} },
			Start:  func(map[string]string) sim.Start { return sim.Start{} },
			Script: func(loc string, p map[string]string) []Step {
				return append(taobaoSearch(loc, p["query"]),
					tap("open the first result", firstResult(loc, p["query"])),
					tap("add it to the cart", tr(loc, "Add to cart", "加入购物车")),
					done("added to the cart"),
				)
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := ParseState(b)
				if err != nil {
					return err
				}
				if st.Taobao == nil {
					return notMet("Taobao is not installed")
				}
				want := firstResult(st.Locale, p["query"])
				if len(st.Taobao.Cart) != 1 || st.Taobao.Cart[0].Title != want || st.Taobao.Cart[0].Qty != 1 {
					return notMet("cart is %v, want one %q", st.Taobao.Cart, want)
				}
				if len(st.Taobao.Orders) != 0 {
					return notMet("%d orders placed; the goal only adds to the cart", len(st.Taobao.Orders))
				}
				return nil
			},
		},
	)
}
