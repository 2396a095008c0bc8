"""How VMSST's tables and claims name its runs."""
from __future__ import annotations

LABEL = {"init": "VMSST at step 0",
         "contrastive": "Contrastive", "bitranslation": "BiTranslation", "vmsst_contrastive": "VMSST Contrastive",
         "vmsst": "VMSST", "vmsst_fact": "VMSST (fact.)", "vmsst_4enc": "VMSST (4 enc.)",
         "vmsst_dec-half": "VMSST (12L dec.)", "vmsst_dec-1": "VMSST (1L dec.)", "vmsst_nokl": "VMSST (no KL)",
         "vmsst_1enc": "VMSST (1 enc.)", "vmsst_no-enc-le": "VMSST (no enc. l.e.)",
         "vmsst_no-dec-le": "VMSST (no dec. l.e.)", "contrastive_l4": "Contrastive",
         "bitranslation_l4": "BiTranslation", "vmsst_l4": "VMSST", "vmsst_full": "VMSST (full enc., full dec.)"}
