from django.apps import AppConfig


class SolutionsConfig(AppConfig):
    name = "solutions"
    verbose_name = "Problems and leaderboards"
