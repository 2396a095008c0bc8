"""The census (issue 32, section 3): what each paper-scale job needs, counted from the code before it runs."""
