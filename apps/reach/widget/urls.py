from django.urls import path

from apps.reach.widget import views

# Under /widget/: the embeddable widget's request (its script is a static file, reach/widget.js).
urlpatterns = [path("ask", views.widget_ask, name="reach-widget-ask")]
