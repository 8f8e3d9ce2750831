/* The one table of rule families. A new family is one file in lint/ plus one line here.
 *
 * Invariant: rule ids are unique across the table; tether__rule_find is the only lookup. */
#include "lint/lint.h"

#include <string.h>

extern const tether_lint_family tether__family_rawop;
extern const tether_lint_family tether__family_typeid;
extern const tether_lint_family tether__family_excludelibs;
extern const tether_lint_family tether__family_typeid_elf;

const tether_lint_family *const tether__families[] = {
    &tether__family_rawop,
    &tether__family_typeid,
    &tether__family_excludelibs,
    &tether__family_typeid_elf,
};

const size_t tether__nfamilies = sizeof tether__families / sizeof tether__families[0];

const tether_lint_rule_info *tether__rule_find(const char *id, const tether_lint_family **fam) {
  for (size_t i = 0; i < tether__nfamilies; i++)
    for (size_t j = 0; j < tether__families[i]->nrules; j++)
      if (strcmp(tether__families[i]->rules[j].id, id) == 0) {
        if (fam) *fam = tether__families[i];
        return &tether__families[i]->rules[j];
      }
  return NULL;
}
