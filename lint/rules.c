/* The one table of rule families. A new family is a folder of lint/ (one file, or a few behind a
 * private header, as rawop/rawop.h, typeid/typeid.h and excludelibs/excludelibs.h do) plus one line
 * here.
 *
 * Invariant: rule ids are unique across the table; tether_lint__rule_find is the only lookup. */
#include "lint/lint.h"

#include <string.h>

extern const tether_lint_family tether_lint__family_rawop;
extern const tether_lint_family tether_lint__family_typeid;
extern const tether_lint_family tether_lint__family_excludelibs;
extern const tether_lint_family tether_lint__family_typeid_elf;
extern const tether_lint_family tether_lint__family_rtld;
extern const tether_lint_family tether_lint__family_lifetime;
extern const tether_lint_family tether_lint__family_direct;

const tether_lint_family *const tether_lint__families[] = {
    &tether_lint__family_rawop,      &tether_lint__family_typeid, &tether_lint__family_excludelibs,
    &tether_lint__family_typeid_elf, &tether_lint__family_rtld,   &tether_lint__family_lifetime,
    &tether_lint__family_direct,
};

const size_t tether_lint__nfamilies =
    sizeof tether_lint__families / sizeof tether_lint__families[0];

const tether_lint_rule_info *tether_lint__rule_find(const char *id,
                                                    const tether_lint_family **fam) {
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    for (size_t j = 0; j < tether_lint__families[i]->nrules; j++)
      if (strcmp(tether_lint__families[i]->rules[j].id, id) == 0) {
        if (fam) *fam = tether_lint__families[i];
        return &tether_lint__families[i]->rules[j];
      }
  return NULL;
}
