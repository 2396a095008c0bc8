"""Language codes and the language sets the papers and benchmarks name (one place; data, evaluation and reports
import them from here).

Tatoeba v1 (LASER) files use ISO 639-3 codes; the papers' tables use ISO 639-1.
"""
from __future__ import annotations

# English's codes (ISO 639-1 and 639-3): a dual encoder's English side, the rehearsal's pivot language.
ENGLISH = ("en", "eng")
# ISO 639-3 codes of Tatoeba v1 files.
XTREME_36 = ("afr ara bul ben deu ell spa est eus pes fin fra heb hin hun ind ita jpn jav kat kaz kor mal "
             "mar nld por rus swh tam tel tha tgl tur urd vie cmn").split()
LASER_14 = "ara bul deu ell spa fra hin rus swh tha tur urd vie cmn".split()
# DAP's 28: the XTREME languages whose Tatoeba test set has the full 1000 pairs.
SHORT_TEST_SETS = {"jav", "kat", "kaz", "mal", "swh", "tam", "tel", "tha"}
DAP_28 = [lang for lang in XTREME_36 if lang not in SHORT_TEST_SETS]
# Tatoeba v1 languages written in the Latin script (ISO 639-3), for the "trained Latin-script" group
# of the mini scale, where the initial English MiniLM's vocabulary covers only Latin-script text.
LATIN_SCRIPT = set(("afr ang arq ast bre cat cbk ceb ces cha cor csb dan deu dsb epo est eus fao fin fra fry gla "
                    "gle glg gsw hrv hsb hun ido ile ina ind isl ita jav kab kzj lat lfn lit lvs max nds nld nno "
                    "nob nov oci pam pms pol por ron slk slv spa sqi swe swg swh tgl tuk tur tzl uzb vie war "
                    "xho yor zsm").split())
# ISO 639-1 codes used in the paper's tables.
TO_ISO1 = dict(zip(XTREME_36, ("af ar bg bn de el es et eu fa fi fr he hi hu id it ja jv ka kk ko ml mr nl pt ru sw ta "
                               "te th tl tr ur vi zh").split()))
# XNLI's 15 languages (Conneau et al. 2018), ISO 639-1.
XNLI_15 = "ar bg de el en es fr hi ru sw th tr ur vi zh".split()
