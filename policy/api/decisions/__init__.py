"""The decisions API: evaluations, the decision history, what-if and descheduling reports."""
