"""The decisions API: evaluating pods, the decision history, what-if comparisons and the
descheduling reports."""
