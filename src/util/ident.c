/*
 * ident.c — confusable skeletons and the Unicode rules of new names (ident.h), on ICU.
 *
 * Why ICU and not a table of our own: the confusables data (UTS #39) has thousands of entries
 * and changes with each Unicode version; ICU ships it with normalization and script data, as
 * a Debian package.  One USpoofChecker is opened once and shared: ICU documents its checking
 * and skeleton functions as safe to call from many threads on one instance.
 *
 * Mixed scripts are judged by hand rather than with uspoof's restriction-level check, because
 * that check also refuses every character outside UTS #39's identifier profile — and branch
 * names legitimately hold '/', '.' and '-'.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/uspoof.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include "util/error.h"
#include "util/ident.h"

#define U16_MAX 1024 /* UTF-16 units: branch names are at most a few hundred bytes */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static USpoofChecker *checker;
static const UNormalizer2 *nfkc_cf, *nfc;

static void open_checker(void)
{
    UErrorCode e = U_ZERO_ERROR;
    USpoofChecker *sc = uspoof_open(&e);
    if (U_FAILURE(e)) return;
    nfkc_cf = unorm2_getNFKCCasefoldInstance(&e);
    if (U_SUCCESS(e)) nfc = unorm2_getNFCInstance(&e);
    if (U_FAILURE(e)) {
        uspoof_close(sc);
        return;
    }
    checker = sc; /* lives for the process: ICU data is process-wide anyway */
}

static og_status ready(void)
{
    pthread_once(&once, open_checker);
    return checker ? OG_OK : og_err(OG_ERR_INTERNAL, "Unicode confusables data (ICU) is unavailable");
}

og_status og_ident_skeleton(const char *name, char *out, size_t cap)
{
    OG_TRY(ready());
    UChar u[U16_MAX], f[U16_MAX], s[U16_MAX];
    int32_t n = 0;
    UErrorCode e = U_ZERO_ERROR;
    u_strFromUTF8(u, U16_MAX, &n, name, -1, &e);
    if (U_FAILURE(e) || n >= U16_MAX) return og_err(OG_ERR_INVALID, "name is not valid UTF-8 or too long");
    int32_t fn = unorm2_normalize(nfkc_cf, u, n, f, U16_MAX, &e);
    if (U_FAILURE(e) || fn >= U16_MAX) return og_err(OG_ERR_INVALID, "name is too long to compare");
    int32_t sn = uspoof_getSkeleton(checker, 0, f, fn, s, U16_MAX, &e);
    if (U_FAILURE(e) || sn >= U16_MAX) return og_err(OG_ERR_INVALID, "name is too long to compare");
    int32_t on = 0;
    u_strToUTF8(out, (int32_t)cap, &on, s, sn, &e);
    if (U_FAILURE(e) || (size_t)on >= cap) return og_err(OG_ERR_INVALID, "name is too long to compare");
    out[on] = '\0';
    return OG_OK;
}

int og_ident_confusable(const char *a, const char *b)
{
    if (!a || !b || !strcmp(a, b)) return 0;
    char sa[OG_IDENT_SKELETON_MAX], sb[OG_IDENT_SKELETON_MAX];
    if (og_ident_skeleton(a, sa, sizeof sa) != OG_OK || og_ident_skeleton(b, sb, sizeof sb) != OG_OK) {
        og_error_clear();
        return 0;
    }
    return strcmp(sa, sb) == 0;
}

/* A character no reader can see or tell from a space: refused anywhere in a name. */
static int invisible(UChar32 c)
{
    switch (u_charType(c)) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
    case U_UNASSIGNED: return 1;
    case U_SPACE_SEPARATOR: return c != 0x20;
    default: return u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT);
    }
}

/* UTS #39 "highly restrictive": one script, or Latin with Han and one of the East Asian
 * companions (Hiragana+Katakana, Bopomofo, Hangul).  Common and Inherited characters (digits,
 * punctuation, combining marks) belong to every script. */
static int scripts_ok(const UScriptCode *sc, size_t n)
{
    if (n <= 1) return 1;
    static const UScriptCode sets[][4] = {{USCRIPT_LATIN, USCRIPT_HAN, USCRIPT_HIRAGANA, USCRIPT_KATAKANA},
                                          {USCRIPT_LATIN, USCRIPT_HAN, USCRIPT_BOPOMOFO, USCRIPT_HAN},
                                          {USCRIPT_LATIN, USCRIPT_HAN, USCRIPT_HANGUL, USCRIPT_HAN}};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        size_t i = 0;
        for (; i < n; i++) {
            size_t j = 0;
            while (j < 4 && sets[k][j] != sc[i]) j++;
            if (j == 4) break;
        }
        if (i == n) return 1;
    }
    return 0;
}

og_status og_ident_check(const char *name, const char *what)
{
    OG_TRY(ready());
    size_t len = strlen(name);
    UScriptCode scripts[8];
    size_t nscripts = 0;
    for (int32_t i = 0; i < (int32_t)len;) {
        UChar32 c;
        U8_NEXT(name, i, (int32_t)len, c);
        if (c < 0) return og_err(OG_ERR_INVALID, "%s \"%s\" is not valid UTF-8", what, name);
        if (invisible(c))
            return og_err(OG_ERR_INVALID,
                          "%s \"%s\" contains U+%04X, an invisible, control or unassigned character; names must be "
                          "readable as written", what, name, (unsigned)c);
        UErrorCode e = U_ZERO_ERROR;
        UScriptCode s = uscript_getScript(c, &e);
        if (U_FAILURE(e) || s == USCRIPT_COMMON || s == USCRIPT_INHERITED || s == USCRIPT_UNKNOWN) continue;
        size_t k = 0;
        while (k < nscripts && scripts[k] != s) k++;
        if (k == nscripts) {
            if (nscripts == sizeof scripts / sizeof scripts[0] || (scripts[nscripts++] = s, !scripts_ok(scripts, nscripts)))
                return og_err(OG_ERR_INVALID,
                              "%s \"%s\" mixes scripts (%s with %s, at U+%04X): such names can pass for another "
                              "name; write it in one script", what, name, uscript_getName(scripts[0]),
                              uscript_getName(s), (unsigned)c);
        }
    }
    UChar u[U16_MAX];
    int32_t n = 0;
    UErrorCode e = U_ZERO_ERROR;
    u_strFromUTF8(u, U16_MAX, &n, name, (int32_t)len, &e);
    if (U_FAILURE(e) || n >= U16_MAX) return og_err(OG_ERR_INVALID, "%s \"%s\" is not valid UTF-8", what, name);
    if (!unorm2_isNormalized(nfc, u, n, &e) || U_FAILURE(e))
        return og_err(OG_ERR_INVALID,
                      "%s \"%s\" is not in Unicode normalization form C (NFC): a composed and a decomposed spelling "
                      "would be two names that look the same; write it composed", what, name);
    return OG_OK;
}
