"""What a job's records add up to: pass@k and its intervals, the summary, comparisons, efficiency scores, figures and
the job folder read back."""
