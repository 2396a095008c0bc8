"""Tables (CSV + Markdown + LaTeX) and figures (PNG + PDF) with the paper's numbers beside ours."""
