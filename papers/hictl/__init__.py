"""HICTL: hierarchical contrastive learning (Wei et al., ICLR 2021)."""
