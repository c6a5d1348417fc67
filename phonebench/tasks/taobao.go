package tasks

import (
	"fmt"

	"phonepilot/device/sim"
)

const taobaoPkg = "com.taobao.taobao"

// Queries a person types in either locale (brand names, as Chinese shoppers
// type them too).
var queries = []string{"Mac mini", "iPhone 16", "Kindle", "AirPods", "Switch", "iPad"}

// The fresh phone's Taobao search history, per locale.
var (
	historyEn = []string{"Dress", "Bluetooth earbuds", "Phone case"}
	historyZh = []string{"连衣裙", "蓝牙耳机", "手机壳"}
)

// Products already in the cart when a task starts with one.
var cartTitles = []string{"USB-C cable 2m", "Desk lamp", "Notebook A5", "Water bottle 750ml"}

// result is the title of the n-th (0-based, non-sponsored) result for query
// on a phone in locale.
func result(locale, query string, n int) string {
	if ts := sim.ResultTitles(locale, query); n < len(ts) {
		return ts[n]
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

func queryParams(seed int64) map[string]string {
	return map[string]string{"query": pick(queries, seed, 2)}
}

func noStart(map[string]string) sim.Start { return sim.Start{} }

// taobaoState parses the state and fails when Taobao is not installed.
func taobaoState(b []byte) (State, error) {
	st, err := ParseState(b)
	if err != nil {
		return st, err
	}
	if st.Taobao == nil {
		return st, notMet("Taobao is not installed")
	}
	return st, nil
}

// cartIs checks the cart holds exactly titles, one of each, and that no
// order was placed.
func cartIs(st State, titles ...string) error {
	c := st.Taobao.Cart
	ok := len(c) == len(titles)
	for i := 0; ok && i < len(c); i++ {
		ok = c[i].Title == titles[i] && c[i].Qty == 1
	}
	if !ok {
		return notMet("cart holds %v, want one each of %q", c, titles)
	}
	if n := len(st.Taobao.Orders); n != 0 {
		return notMet("%d orders placed; the goal only fills the cart", n)
	}
	return nil
}

func init() {
	register(
		Task{
			Name: "taobao.search", Apps: []string{taobaoPkg}, Kind: Normal,
			Goal:   map[string]string{"en": "Open Taobao and search for {query}", "zh": "打开淘宝搜索{query}"},
			Rule:   map[string]string{"en": "open Taobao and search {query}", "zh": "打开淘宝搜索{query}"},
			Params: queryParams, Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return append(taobaoSearch(loc, p["query"]), doneShowing("the results for "+p["query"]+" show", result(loc, p["query"], 0)))
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				if st.Taobao.LastSearch != p["query"] || st.Taobao.Screen != "results" || st.Foreground != taobaoPkg {
					return notMet("last search %q, Taobao on %q (%s in front); want the results of %q", st.Taobao.LastSearch, st.Taobao.Screen, st.Foreground, p["query"])
				}
				return nil
			},
		},
		Task{
			Name: "taobao.cart.add", Apps: []string{taobaoPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Search Taobao for {query} and add the first result to the cart",
				"zh": "在淘宝搜索{query}，把第一个商品加入购物车",
			},
			Rule: map[string]string{
				"en": "open Taobao, search {query}, tap the first product, tap Add to cart",
				"zh": "打开淘宝，搜索{query}，点击第一个商品，点击加入购物车",
			},
			Params: queryParams, Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return append(taobaoSearch(loc, p["query"]),
					tap("open the first result", result(loc, p["query"], 0)),
					tap("add it to the cart", tr(loc, "Add to cart", "加入购物车")),
					done("added to the cart"),
				)
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				return cartIs(st, result(st.Locale, p["query"], 0))
			},
		},
		Task{
			Name: "taobao.cart.add_two", Apps: []string{taobaoPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Search Taobao for {query} and add the first two results to the cart",
				"zh": "在淘宝搜索{query}，把前两个商品都加入购物车",
			},
			Rule: map[string]string{
				"en": "open Taobao, search {query}, tap the first product, tap Add to cart, go back, tap the second product, tap Add to cart",
				"zh": "打开淘宝，搜索{query}，点击第一个商品，点击加入购物车，返回，点击第二个商品，点击加入购物车",
			},
			Params: queryParams, Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return append(taobaoSearch(loc, p["query"]),
					tap("open the first result", result(loc, p["query"], 0)),
					tap("add it to the cart", tr(loc, "Add to cart", "加入购物车")),
					key("back to the results", "back"),
					tap("open the second result", result(loc, p["query"], 1)),
					tap("add it to the cart", tr(loc, "Add to cart", "加入购物车")),
					done("both are in the cart"),
				)
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				return cartIs(st, result(st.Locale, p["query"], 0), result(st.Locale, p["query"], 1))
			},
		},
		Task{
			Name: "taobao.history.search", Apps: []string{taobaoPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "In Taobao, search again for {past_en} from the search history",
				"zh": "在淘宝的历史搜索里再搜一次{past_zh}",
			},
			Rule: map[string]string{"en": "open Taobao, tap Search, tap {past_en}", "zh": "打开淘宝，点击搜索，点击{past_zh}"},
			Params: func(seed int64) map[string]string {
				i := int(uint64(seed) % uint64(len(historyEn)))
				return map[string]string{"past_en": historyEn[i], "past_zh": historyZh[i]}
			},
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return append(taobaoOpen(loc),
					tap("open the search page", tr(loc, "Search", "搜索")),
					tap("search the past query again", p["past_"+loc]),
					doneShowing("searched "+p["past_"+loc]+" again", result(loc, p["past_"+loc], 0)),
				)
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				want := localParam(b, p, "past")
				if st.Taobao.LastSearch != want || st.Taobao.Screen != "results" {
					return notMet("last search %q on %q, want the results of %q", st.Taobao.LastSearch, st.Taobao.Screen, want)
				}
				return nil
			},
		},
		Task{
			Name: "taobao.cart.open", Apps: []string{taobaoPkg}, Kind: Normal,
			Goal: map[string]string{"en": "Open my Taobao cart", "zh": "打开淘宝购物车"},
			Rule: map[string]string{"en": "open Taobao, tap Cart", "zh": "打开淘宝，点击购物车"},
			Params: func(seed int64) map[string]string {
				return map[string]string{"item": pick(cartTitles, seed, 3)}
			},
			Start: func(p map[string]string) sim.Start { return sim.Start{Cart: []string{p["item"]}} },
			Script: func(loc string, _ map[string]string) []Step {
				return append(taobaoOpen(loc),
					tap("open the cart tab", tr(loc, "Cart", "购物车")),
					done("the cart is open"),
				)
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				if st.Foreground != taobaoPkg || st.Taobao.Screen != "cart" {
					return notMet("Taobao on %q (%s in front), want the cart", st.Taobao.Screen, st.Foreground)
				}
				if len(st.Taobao.Cart) != 1 || st.Taobao.Cart[0].Title != p["item"] {
					return notMet("cart holds %v, want the %q it started with", st.Taobao.Cart, p["item"])
				}
				return nil
			},
		},
	)
}

// checkoutLabel is the cart's Checkout button for n items.
func checkoutLabel(loc string, n int) string {
	return tr(loc, fmt.Sprintf("Checkout (%d)", n), fmt.Sprintf("结算(%d)", n))
}
