from django import forms

from .models import AlertPreferences


class AlertPreferencesForm(forms.ModelForm):
    class Meta:
        model = AlertPreferences
        fields = ["my_rank_drops", "followed_rank_drops", "share_rank_drops"]
