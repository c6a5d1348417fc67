package tasks

import (
	"fmt"

	"phonepilot/device/sim"
)

const contactsPkg = "com.android.contacts"

// New contacts' names, drawn per seed.
var (
	newNamesEn = []string{"Grace Liu", "Henry Park", "Iris Novak", "Jack Moreno", "Kate Fischer", "Leo Tanaka"}
	newNamesZh = []string{"赵敏", "孙浩", "周婷", "吴磊", "郑雪", "冯涛"}
)

// The fresh phone's contacts, per locale, in the list's order.
var (
	peopleEn = []sim.StartContact{{Name: "Alice Chen", Phone: "(555) 010-1001"}, {Name: "Bob Martinez", Phone: "(555) 010-1002"}, {Name: "Carol Wang", Phone: "(555) 010-1003"}, {Name: "David Kim", Phone: "(555) 010-1004"}}
	peopleZh = []sim.StartContact{{Name: "张伟", Phone: "138 0013 8000"}, {Name: "李娜", Phone: "139 0013 9001"}, {Name: "王芳", Phone: "137 0013 7002"}, {Name: "陈杰", Phone: "136 0013 6003"}}
)

// A long address book, for a contact that needs scrolling to: sorted by
// name, the last ones are off the first screen.
var longBook = []sim.StartContact{
	{Name: "Aaron Blake", Phone: "555-0301"}, {Name: "Beth Cole", Phone: "555-0302"}, {Name: "Chris Dunn", Phone: "555-0303"},
	{Name: "Dana Evans", Phone: "555-0304"}, {Name: "Eli Ford", Phone: "555-0305"}, {Name: "Fay Grant", Phone: "555-0306"},
	{Name: "Gus Hale", Phone: "555-0307"}, {Name: "Hana Ito", Phone: "555-0308"}, {Name: "Ivan Jones", Phone: "555-0309"},
	{Name: "Jill Kerr", Phone: "555-0310"}, {Name: "Kurt Lane", Phone: "555-0311"}, {Name: "Lena Moss", Phone: "555-0312"},
	{Name: "Max Nash", Phone: "555-0313"}, {Name: "Nora Owen", Phone: "555-0314"}, {Name: "Omar Pike", Phone: "555-0315"},
	{Name: "Pia Quinn", Phone: "555-0316"}, {Name: "Ray Stone", Phone: "555-0317"}, {Name: "Sue Tate", Phone: "555-0318"},
	{Name: "Tom Usher", Phone: "555-0319"}, {Name: "Uma Vance", Phone: "555-0320"}, {Name: "张三丰", Phone: "555-0321"},
	{Name: "李白", Phone: "555-0322"}, {Name: "王维", Phone: "555-0323"}, {Name: "杜甫", Phone: "555-0324"},
}

// pick draws one of list for seed; salt keeps two draws of one seed apart.
func pick(list []string, seed int64, salt int) string {
	return list[pickIndex(len(list), seed, salt)]
}

func pickIndex(n int, seed int64, salt int) int {
	i := (seed*7919 + int64(salt)*104729) % int64(n)
	if i < 0 {
		i += int64(n)
	}
	return int(i)
}

// phoneFor is a number for seed, "555-02xx", distinct from every Start's
// and default contact's number.
func phoneFor(seed int64, salt int) string {
	n := (seed*31 + int64(salt)*17) % 90
	if n < 0 {
		n += 90
	}
	return fmt.Sprintf("555-02%02d", 10+n)
}

// personParams draws one of the fresh phone's contacts per locale:
// {person_en} {person_zh} and their numbers {person_phone_en} ….
func personParams(seed int64, salt int, prefix string) map[string]string {
	i := pickIndex(len(peopleEn), seed, salt)
	return map[string]string{
		prefix + "_en": peopleEn[i].Name, prefix + "_zh": peopleZh[i].Name,
		prefix + "_phone_en": peopleEn[i].Phone, prefix + "_phone_zh": peopleZh[i].Phone,
	}
}

func contactsState(b []byte) (State, error) {
	st, err := ParseState(b)
	if err != nil {
		return st, err
	}
	if st.Contacts == nil {
		return st, notMet("Contacts is not installed")
	}
	return st, nil
}

// contactCount counts the contacts named name with number phone ("" = any
// number).
func contactCount(st State, name, phone string) int {
	n := 0
	for _, c := range st.Contacts.Contacts {
		if sameText(c.Name, name) && (phone == "" || digits(c.Phone) == digits(phone)) {
			n++
		}
	}
	return n
}

// contactOpen checks Contacts shows name's card.
func contactOpen(b []byte, name string) error {
	st, err := contactsState(b)
	if err != nil {
		return err
	}
	if st.Foreground != contactsPkg || st.Contacts.Screen != "detail" || st.Contacts.Open != name {
		return notMet("Contacts on %q showing %q (%s in front), want %q's card", st.Contacts.Screen, st.Contacts.Open, st.Foreground, name)
	}
	return nil
}

func createScript(loc, name, phone string) []Step {
	return []Step{
		launch(tr(loc, "Contacts", "通讯录")),
		tap("start a new contact", tr(loc, "Create contact", "新建联系人")),
		typeInto("enter the name", tr(loc, "Name", "姓名"), name, false),
		typeInto("enter the number", tr(loc, "Phone", "电话"), phone, false),
		tap("save the contact", tr(loc, "Save", "保存")),
		done("contact saved"),
	}
}

func init() {
	register(
		Task{
			Name: "contacts.create", Apps: []string{contactsPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Create a contact named {name_en} with phone number {phone}",
				"zh": "新建联系人{name_zh}，电话号码{phone}",
			},
			Rule: map[string]string{
				"en": "open Contacts, tap Create contact, type {name_en} into Name, type {phone} into Phone, tap Save",
				"zh": "打开通讯录，点击新建联系人，在姓名输入{name_zh}，在电话输入{phone}，点击保存",
			},
			Params: func(seed int64) map[string]string {
				return map[string]string{"name_en": pick(newNamesEn, seed, 1), "name_zh": pick(newNamesZh, seed, 1), "phone": phoneFor(seed, 1)}
			},
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return createScript(loc, p["name_"+loc], p["phone"])
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := contactsState(b)
				if err != nil {
					return err
				}
				name := localParam(b, p, "name")
				if n := contactCount(st, name, p["phone"]); n != 1 {
					return notMet("%d contacts %q with number %s, want 1 (of %d contacts)", n, name, p["phone"], len(st.Contacts.Contacts))
				}
				return nil
			},
		},
		Task{
			Name: "contacts.create.already", Apps: []string{contactsPkg}, Kind: AlreadyDone,
			Goal: map[string]string{
				"en": "Make sure {name_en} ({phone}) is in my contacts",
				"zh": "确认通讯录里有{name_zh}（{phone}）",
			},
			// Searching shows the contact without changing anything.
			Rule: map[string]string{"en": "open Contacts and search for {name_en}", "zh": "打开通讯录搜索{name_zh}"},
			Params: func(seed int64) map[string]string {
				return map[string]string{"name_en": pick(newNamesEn, seed, 4), "name_zh": pick(newNamesZh, seed, 4), "phone": phoneFor(seed, 4)}
			},
			// Both locales' spellings are in the book, with the fresh
			// phone's English contacts around them.
			Start: func(p map[string]string) sim.Start {
				book := append([]sim.StartContact(nil), peopleEn...)
				book = append(book, sim.StartContact{Name: p["name_en"], Phone: p["phone"]}, sim.StartContact{Name: p["name_zh"], Phone: p["phone"]})
				return sim.Start{Contacts: book}
			},
			Script: func(loc string, p map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Contacts", "通讯录")),
					tap("open the contact to look at the number", p["name_"+loc]),
					doneShowing(p["name_"+loc]+" is already saved with "+p["phone"], p["phone"]),
				}
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := contactsState(b)
				if err != nil {
					return err
				}
				name := localParam(b, p, "name")
				if n := contactCount(st, name, ""); n != 1 {
					return notMet("%d contacts named %q, want exactly the one it started with", n, name)
				}
				if contactCount(st, name, p["phone"]) != 1 {
					return notMet("%q's number is no longer %s", name, p["phone"])
				}
				return nil
			},
		},
		Task{
			Name: "contacts.open", Apps: []string{contactsPkg}, Kind: Normal,
			Goal:   map[string]string{"en": "Open {person_en}'s contact card", "zh": "打开{person_zh}的联系人详情"},
			Rule:   map[string]string{"en": "open Contacts, tap {person_en}", "zh": "打开通讯录，点击{person_zh}"},
			Params: func(seed int64) map[string]string { return personParams(seed, 5, "person") },
			Start:  noStart,
			Script: func(loc string, p map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Contacts", "通讯录")),
					tap("open the contact", p["person_"+loc]),
					done("the card is open"),
				}
			},
			Check: func(b []byte, p map[string]string) error { return contactOpen(b, localParam(b, p, "person")) },
		},
		Task{
			Name: "contacts.open.scroll", Apps: []string{contactsPkg}, Kind: Normal,
			Goal: map[string]string{"en": "Open {far}'s contact card", "zh": "打开{far}的联系人详情"},
			Rule: map[string]string{"en": "open Contacts, tap {far}", "zh": "打开通讯录，点击{far}"},
			Params: func(seed int64) map[string]string {
				// One of the last six names: below the first screen.
				far := longBook[len(longBook)-1-pickIndex(6, seed, 6)]
				return map[string]string{"far": far.Name}
			},
			Start: func(map[string]string) sim.Start { return sim.Start{Contacts: longBook} },
			Script: func(loc string, p map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Contacts", "通讯录")),
					tap("scroll to the contact and open it", p["far"]),
					done("the card is open"),
				}
			},
			Check: func(b []byte, p map[string]string) error { return contactOpen(b, p["far"]) },
		},
	)
}
