package tasks

import (
	"fmt"

	"phonepilot/device/sim"
)

const contactsPkg = "com.android.contacts"

// New contacts' names and numbers, drawn per seed.
var (
	newNamesEn = []string{"Grace Liu", "Henry Park", "Iris Novak", "Jack Moreno", "Kate Fischer", "Leo Tanaka"}
	newNamesZh = []string{"赵敏", "孙浩", "周婷", "吴磊", "郑雪", "冯涛"}
)

// pick draws one of list for seed; salt keeps two draws of one seed apart.
func pick(list []string, seed int64, salt int) string {
	i := (seed*7919 + int64(salt)*104729) % int64(len(list))
	if i < 0 {
		i += int64(len(list))
	}
	return list[i]
}

// phoneFor is a number for seed, "555-01xx" style, distinct from the default
// contacts' numbers.
func phoneFor(seed int64, salt int) string {
	n := (seed*31 + int64(salt)*17) % 90
	if n < 0 {
		n += 90
	}
	return fmt.Sprintf("555-02%02d", 10+n)
}

func init() {
	register(
		Task{
			Name: "contacts.create", Apps: []string{contactsPkg}, Kind: Normal,
			Goal: map[string]string{
				"en": "Create a contact named {name_en} with phone number {phone}",
				"zh": "新建联系人{name_zh}，电话号码{phone}",
			},
			Params: func(seed int64) map[string]string {
				return map[string]string{"name_en": pick(newNamesEn, seed, 1), "name_zh": pick(newNamesZh, seed, 1), "phone": phoneFor(seed, 1)}
			},
			Start: func(map[string]string) sim.Start { return sim.Start{} },
			Script: func(loc string, p map[string]string) []Step {
				name := p["name_"+loc]
				return []Step{
					launch(tr(loc, "Contacts", "通讯录")),
					tap("start a new contact", tr(loc, "Create contact", "新建联系人")),
					typeInto("enter the name", tr(loc, "Name", "姓名"), name, false),
					typeInto("enter the number", tr(loc, "Phone", "电话"), p["phone"], false),
					tap("save the contact", tr(loc, "Save", "保存")),
					done("contact saved"),
				}
			},
			Check: func(b []byte, p map[string]string) error {
				return hasContact(b, p, "name", p["phone"])
			},
		},
	)
}

// hasContact checks that a contact named params[nameKey+"_"+locale] (the
// state's locale) with number phone exists.
func hasContact(b []byte, p map[string]string, nameKey, phone string) error {
	st, err := ParseState(b)
	if err != nil {
		return err
	}
	if st.Contacts == nil {
		return notMet("Contacts is not installed")
	}
	name := localParam(b, p, nameKey)
	for _, c := range st.Contacts.Contacts {
		if sameText(c.Name, name) && digits(c.Phone) == digits(phone) {
			return nil
		}
	}
	return notMet("no contact %q with number %s among %d contacts", name, phone, len(st.Contacts.Contacts))
}
